"""A corpus of fake, format-correct secrets and innocent look-alikes for the detector.

HELD_OUT was written first, before the detector's rules, and the rules were never
tuned against it: it measures how the detector does on formats it was not fitted
to. TUNED is what the rules were written and adjusted against. LOOKALIKES are
innocent lines that must never be refused. Every value here is random and fake.
The first measurement of HELD_OUT, before any change to the rules, was 38 of 40
(95 %). Print the numbers with ``python -m tests.memory.secrets_corpus``.
"""

from __future__ import annotations

HELD_OUT: list[str] = [
    "atlassian token ATATT3xFfGF0DVWqyfkrFAZd6-6X_yZl-DcI08WoHmiXWnhREl_Asie-ys64KT2rumOT_zNtTKjCSFbLRCIe2GWM1wYovdzuMobWRv3Dr0501kiKmeknUt-tiycrRXpMSPUa_AhewwR34pkzC_8tWpn5q4l8YU6Cgzg5onBacU3lzDPXzaLLkPZCLk1VPMTL=36FBC969",
    "LINEAR_KEY lin_api_zNy16RH7SUw0RMLxRBmF0HG1frkeFU3rAXhN10rs",
    "doppler service token dp.st.prd.rZ0Grr4OApxp9pYGVDpo0ZMH1mxFXgYhyfPkXKB6",
    "postman key PMAK-1406823ee924b2a124b271a7-9ba23bd558c4d237295a631155a97f3244",
    "databricks host token dapi7a6d554e1e9ddbfb598f48f96c4ff39c",
    "grafana service account glsa_cc3xG8swySbNj1Saf0lCL8iX91BKOL94_3b1bb3a3",
    "new relic user key NRAK-4KP4XWX1XCJUDCO6X4X49LTIRB2",
    "mailgun: key-98e99cfe2fea43bebfc65412964c8630",
    "mailchimp api 1e6aa000499016aa2d7036fd3d424bd1-us12",
    "square access sq0atp-G0zdKi-OuChYNHNJcZAByo",
    "age identity AGE-SECRET-KEY-1LF509MKLAHG27XW420WMV4G3YU5F0EP5EKN88CU6QL4VPQ5H7XT8RU39PV",
    "vault login hvs.FjhQSXO_u_Jh97FhZ58upvQLZo5xMuTThZJjF84Ky9iiLixYmpxx_PEy4FWdSNp_fm4VGQnny_25mqdTqX5Q2oW81q",
    "terraform cloud XeUlpCmrMJ1Q16.atlasv1.6jn9Ha04v6xfZkGuJ12A8Utioy6aLg5joe2XkPjFs37IyfCTs9eyC6FBvEUot5c66LR",
    "pulumi access pul-30bd08b152f1013a47bbb276783d0603da4871ab",
    "docker login -u bob -p dckr_pat_WuPMucIcfLsMAdrfqTI4HSMrU64",
    "groq key 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",
    "replicate r8_v1vJ6OoXyJK8nFDWszU8YHL63BF1VYg1yHuB4",
    "perplexity 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",
    "stripe webhook signing secret whsec_9k3UkWom0d8QPyKHoK74giQqscjSEfx2",
    "slack app-level token xapp-1-A0G67RHIDHW-4542902600775-c71bea9d48d227a6c1e979a8d100d16732f45ef20891b28b9e77127e913d8d34",
    "discord webhook https://discord.com/api/webhooks/565767781656564477/aFjHjgrebnB_5LAlKOM-t5SHLxZMdpcC0BsrmwH65wFWN01dua6nrT5p3JmejKx0Ph1Q",
    "teams hook https://contoso.webhook.office.com/webhookb2/3f1c2a4e-8b7d-4c1e-9a2f-5d6e7f8a9b0c@72f988bf-86f1-41af-91ab-2d7cd011db47/IncomingWebhook/104f4e48fc8aa9a065c9529915f84ed4/9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b",
    "redis url redis://:Om4J2AutcUrGmKS5@cache.internal:6379/0",
    "mongo mongodb+srv://admin:A7GWZkYDfNnW@cluster0.x7k2p.mongodb.net/prod",
    "amqp://deploy:fahirJQYnQc8A8@rabbit.internal:5672/vhost",
    "machine api.example.com login bob password jFRW88WwKtAnbz",
    "export AWS_SECRET_ACCESS_KEY=31Mc0DV6Hk4pf7xOBQqqUGukcP7jeSft+xqWuTqS",
    "AZURE_CLIENT_SECRET=xc08Q~RiA9~QusX_CZaPTto-p2nBfxrXwLpPaf_q",
    "jdbc:mysql://db:3306/app?user=root&password=sKYaQ8hDMl9A",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nzKVeGEdLM5QQvSJZ7Ge7GX96cJy1f1bBIbJZszHMbxvTIXCIRbFRwN4pNoLI/nlN\n-----END OPENSSH PRIVATE KEY-----",
    "-----BEGIN ENCRYPTED PRIVATE KEY-----\nvVICnogJ8fTCOIDiS1rMBoRPdE2cISYM/ZP2w1LnoW3d8rr3AkuEmJROlZQxd2de\nntGEPyhf8s4fWcgyeCJ/1FBF4WGMDq6PE6nwj4q7XhcPmGCWdqUlbZ5OCiPHU216\n-----END ENCRYPTED PRIVATE KEY-----",
    "alibaba access key LTAIix2DvVfVbDMTeNz1csSh",
    "facebook token EAACEdEose0cBA3Ab3NPDJx9Kt5DIOoSrUggWJotLlXeqmPGRXBXYYBBjhfpj5URGKjo8Wa4LIEq4dMt1JozHNXQxvUIAyvOrWRhecZnQekkbGGJbSPip2HmjXzzeGQ166xI9d",
    "the wifi password is 8tJTf-0I41JB-42",
    "我的密码是 gsrYB6iGw8",
    "Proxy-Authorization: Basic cHJveHl1c2VyOnRYVTdEZEszc1ZVcA==",
    "X-Api-Key: c2f37f20ce206172a7b7694a8e2b28d5",
    "fly deploy token fo1_HsYBxrcmvPdQcn7GwsbDHRS2L3IklVAE2fTEWaieY2B",
    "anthropic admin key sk-ant-admin01-ql-Rwzda7PzMksm1vaYOGMuRCpQk597UkmVOPNQk0N-DK_EqEnUGZA1CAe_SzEyFDIW5Cui-mnEiMVCePAI-LjKyilA_WAA",
]

# Issue #17 hole 10: each was stored through the CLI, REST and the team bank. The
# rules for them were written against these, so they count as tuned.
PROSE_PASSWORDS: list[str] = [
    "我的邮箱密码是 Xq7!mPz2#Lk9，别告诉别人",
    "数据库密码是hunter2hunter2",
    "服务器登录口令为 Zx9!qW3e",
    "the root pass for db1 is Zx9!qW3eRt",
    "password for the test VM is hunter2",
]

TUNED: list[str] = [
    # Moved here from HELD_OUT: its miss exposed a bug (an assignment read across a line
    # break), so after the fix it is no longer unseen.
    "k8s secret:\n  password: n4n306CwIfNPts7RRh4n4M13",
    "curl -u admin:Sup3rS3cret! https://api.example.com/v1/items",
    "mysql -u root -pS3cretPass42 appdb",
    "Cookie: theme=dark; sessionid=8f14e45fceea167a5a36dedd4bea2543",
    "gitlab token glpat-p8XzRs0LU5XO-XIdlu_a",
    "stripe live key sk_live_FeJMVHoKMuJNhlQkOw17vwWM",
    "stripe restricted rk_live_7tpgke70lXBxkRcRH5Q9pA6k",
    "hugging face hf_9VLa4wFGyQp74pkJeCZAXVEd1sd2qQscAp",
    "alerts go to https://hooks.slack.com/services/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",
    "db is postgres://app:bqLuPp29LAqR@db.internal:5432/app",
    "curl -H 'Authorization: Basic YWRtaW46elc5WjVpaWpneg==' https://api.example.com",
    "Authorization: Bearer mxd5sjpKqMPY_CvxxWzf-hbX7iYwDGOfFXtNL-.m",
    "DefaultEndpointsProtocol=https;AccountName=prodstore;AccountKey=HqWelWEgpme1IaLXNyYl5Qri8cfNJHMMGN4Vfo3P2ul5zMWn+XQrE/VY+75u5oZ99v/FnMMDUqBnn8hKLlkomg==;EndpointSuffix=core.windows.net",
    "Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=wOw3Vd1pq75ghSkOpIJOZnqOwlDJ783f649ZxIsyYG4=",
    "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBFEbO8CSYUy+HmegNLMJ5h6L0BvVVF3RmeYNXOfXPvCSUp32BNHv778Q==\n=RZRv\n-----END PGP PRIVATE KEY BLOCK-----",
    "key file: LS0tLS1CRUdJTiBSU0EgUFJJVkFURSBLRVktLS0tLQpNSUlFcEFJQkFBS0NBUUVBVk5iV2tQVnU4MTE0QVFlOTJ5TktkbmNWMzlEaUVhaitPN3dMVHkwL0N1aFNyODM0VFY4VDhIZ21aV29rCi0tLS0tRU5EIFJTQSBQUklWQVRFIEtFWS0tLS0tCg==",
    '{"user": "svc", "password": "jrjwstOOa4ZeQe"}',
    "db:\n  password: lGgR1mxrwdkc",
    "MYSQL_PWD=LFrRYPzkcgo7 mysql -u root",
    "PGPASSWORD=wIqAmSmU9HBf psql -h db",
    "my password is u0ongc42",
    "npm token npm_UwMIOOPlbTxFEk32CZb6rRdnRXP5NIM6htyn",
    "pypi upload token pypi-AgEIcHlwaS5vcmc7UbTwHdWux0ACK5UkEZwTUqd2dAnBVLpuE27_yBGx3WC-9Hf6AeR4MrCuWsYeaL6z-D9hd",
    "sendgrid 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",
    "twilio api key SK4508aa961e5640547353c33660277376",
    "twilio account ACd0c9abd1f1cf5128f859abf8c91392fa auth token 4499c38e71bd3f6b61f9ad50d651665a",
    "digitalocean dop_v1_07e7bc685bf4ab492179ac5c08867306c6f65dc94c14025e3f12a359e9dc38b0",
    "shopify admin 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",
    "discord bot token OTS7YllUNCd4y6Ff5TJF567k.pbdNsa.i4l0UY4-HxMCMisu0OHTYoVgkzE6R8LE8JyOO9",
    "telegram bot 8634328821:AAxH92IFGloLiAvbE31YHx3ybLW1zHY-KDh",
    "google client secret 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",
    "google access token ya29.sxW5vZXRpAwmoRfoWRZ9IkZgGsT_lOm6Y059Kh0FgHE8HI2D3WRyOUKK5dlJip_8O2QXDHjrwjzVZZ-nslZ_y1DDJAcvzgQYzoZKlIeF-X2ShV9Idcqe-XO7",
    "sk-proj-TW6fL2r0ORdqVutlUci9M5kKc0qG2kyNHoYbfqBSOYfYHwyE",
    "sk-ant-api03-8Gj-RFRBau9Yvab9HjsxHfrC9zzU9OgsqSK1JMUXVAxReIFH0CORtbge6u_26t33DsfR9p2OH2pKcHFN8xiQQ7S4w3T9CAA",
    "AKIA6LP5FYKEWJ2S94YU",
    "ghp_fmytKN0oHdYuxtRIYuMOblQWaytChYW1kRUU",
    "xoxb-103361962931-7091769027693-iXP2adKUPUwiXmtXN6OW3YGg",
    "AIzaMw0TYiH51Nf3CgqN96jLSXleNC9H2mVbtR3",
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.csNSp4YnsShzsxq65pH5useUj3kKVJjBUD9Px9KiNx3",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAVNbWkPVu8114AQe92yNKdncV39DiEaj+O7wLTy0/CuhSr834TV8T8HgmZWok\n-----END RSA PRIVATE KEY-----",
    'api_key = "4XjBMAbP3rYJrmyNyICPk3OY32of9ZCC"',
    "SECRET_KEY='U6p=MpIAymiDaRf7m-Q&%%pBM4aT6q3dF%^7z4rJArFrtMVx=X'",
    "password=2GF6bWJh2p",
    'the admin password is "ak0fc"',
    # Issue #17 hole 10: passwords stated in sentences, English and Chinese (PROSE_PASSWORDS).
    *PROSE_PASSWORDS,
]

# Sentences about passes, passwords and 密码 that state no password (issue #17 hole 10).
PROSE_LOOKALIKES: list[str] = [
    "boarding pass is at the desk",
    "pass rate is 95 %",
    "密码学课程在周三",
    "rotate passwords every quarter",
    "密码策略要求至少十二位",
    "the password for the test VM is in the team vault",
    "the pass for the concert is on my phone",
    "password for the staging box is rotated weekly",
    "the bus pass is 12345678",
    "the exam pass mark is 60 percent",
    "a mountain pass is closed in winter",
    "the passcode for the door is on the sticky note",
    "the pass is valid until 2025-06-30",
    "the pass for gate B is 14",
    "pass the salt, please",
    "two-factor passcodes expire after 30 seconds",
    "password managers like KeePassXC are allowed",
    "the password is the one in 1Password",
    "passport number is on page 2",
    "密码是公司统一发放的",
    "数据库密码为空时无法启动",
    "请把登录密码改成至少十二位",
    "口令在保险库里",
    "忘记密码请联系管理员",
    "Wi-Fi 密码贴在路由器背面",
    "密码长度是 12 位",
    "口令为六位数字",
    "密码是什么来着？",
    "my boarding pass is 4F7K2Q",
    "the boarding pass for flight BA117 is 4F7K2Q",
    "ski pass is SP-20931",
    "the pass for the VM room is hall-b2",
]

LOOKALIKES: list[str] = [
    "fixed in commit 8b0e7153bf7c3706d85c524e440066559a6656c9",
    "git cherry-pick 0bd5482 a90a29b",
    "Merge: 9fa5ff5180bc 0dbc0e15637e",
    "request id e488b6c8-5ad3-4a32-8332-f05a58296818",
    "the run 767d5274-c68d-4b5d-803a-960a8652dbd0 finished in 4.2s",
    "3b91d26ab4a829a95249f512c17b8ed411fa644d35db41d94e5efaf89fc43c5f  hearth-0.4.1.tar.gz",
    "sha256:a52f8b2b19b8f89a50f8a8e9bb8bdb5eba456bf92d5d98065e5751f75143a5f6",
    "image: ghcr.io/acme/web@sha256:1debc267b0bc8d3b1939a9b4ddbe45cf642b0c3a4acdd7f9fcc589f8d0a9f94f",
    "md5 03e7914c0f87f17f8499ff30499a90eb for the backup",
    "build 2024.06.13-1842 passed",
    "version 1.2.3+build.4567 is out",
    "CI job #48213 on runner ci-7",
    "session 20250613-101500-b4108e360ddfcfc6 resumed",
    "entry m-7kr53ck5 was saved",
    "remember to rotate the password every month",
    "the token limit is 8000",
    "max_tokens: 4096",
    "token_limit=8000",
    "the password is rotated by the ops team",
    "my password is too weak, I will change it",
    "Password: see the team vault",
    "reset your password at https://example.com/account/reset",
    "password reset tokens expire after 15 minutes",
    "the API key goes in the OPENAI_API_KEY environment variable",
    "api_key = os.environ['OPENAI_API_KEY']",
    "token = get_token(session)",
    "password=None",
    "password: ${DB_PASSWORD}",
    "api_key: <your-key-here>",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "password: ********",
    "the secret is to preheat the oven",
    "Send the token in an Authorization: Bearer header.",
    "AWS keys start with AKIA and GitHub tokens with ghp_",
    "https://github.com/acme/workhearth/pull/812",
    "postgres://localhost:5432/app",
    "git clone https://alice@github.com/acme/repo.git",
    "https://example.com/cb?token_type=bearer&expires_in=3600",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGAd2S8Z9JVPT+qU7ZGCN1iCsgDarbI8/5 alice@laptop",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEGT8+cDhEleBMXV7TUiJtFjfCJI8dPMxEBd0uofr6tL8cRpZNlHCGIA==\n-----END PUBLIC KEY-----",
    "the certificate starts with -----BEGIN CERTIFICATE-----",
    "SGVsbG8gd29ybGQsIHRoaXMgaXMgYSBwbGFpbiBzZW50ZW5jZQ==",
    "记得每个月更换一次密码",
    "令牌上限是八千，密钥放在保险库里",
    '"integrity": "sha512-eIKRRHi+6MdbQwmuKxIuP+h6x+z1pTcPxBtN23I7KvtsR8C1eJSqssXBRbeX3bkSblzKIDESEF9nZBT69rIA2g=="',
    "golang.org/x/text v0.14.0 h1:8Jnbpe7sM2JPUSS/xfBNgjiOUpJ4EPYQsLyhHgvp8U8=",
    "arn:aws:iam::123456789012:role/deploy",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "pod web-7d4b9c8f6-x2k9p restarted",
    "ticket PROJ-1234 tracks the AbstractSingletonProxyFactoryBean refactor",
    "s3://acme-logs/2024/06/13/run-4f9a2b7c.tar.gz",
    "the secret_santa list is alice, bob and carol",
    "tokens: 1024",
    "set the key with `hearth config set api_key`",
    "export PATH=$HOME/.local/bin:$PATH",
    "use sklearn and the sk-ant prefix for Anthropic keys",
    "private_key_path: ~/.ssh/id_ed25519",
    "the password field must have at least 12 characters",
    "password hashing uses argon2id with 64 MiB",
    "colour #1a2b3c and mac 00:1A:2B:3C:4D:5E on 192.168.1.20",
    *PROSE_LOOKALIKES,
]


def measure() -> dict[str, float]:
    """Recall on each secret set and the false-positive rate on the look-alikes."""
    from workhearth.memory.secrets import find_secrets

    def rate(lines: list[str]) -> float:
        return sum(1 for line in lines if find_secrets(line)) / len(lines)

    return {
        "held_out_recall": rate(HELD_OUT),
        "tuned_recall": rate(TUNED),
        "false_positive_rate": rate(LOOKALIKES),
    }


if __name__ == "__main__":
    from workhearth.memory.secrets import find_secrets

    for name, lines, want in (
        ("held-out", HELD_OUT, True),
        ("tuned", TUNED, True),
        ("look-alikes", LOOKALIKES, False),
    ):
        for line in lines:
            if bool(find_secrets(line)) != want:
                print(
                    f"{name}: {'missed' if want else 'flagged'} {line[:70]!r} {find_secrets(line)}"
                )
    numbers = measure()
    print(
        f"held-out recall {numbers['held_out_recall']:.0%} of {len(HELD_OUT)}, "
        f"tuned recall {numbers['tuned_recall']:.0%} of {len(TUNED)}, "
        f"false positives {numbers['false_positive_rate']:.0%} of {len(LOOKALIKES)} look-alikes"
    )
