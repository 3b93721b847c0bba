"""A corpus of fake, format-correct secrets and innocent look-alikes for the detector.

HELD_OUT was written first, before the detector's rules, and the rules were never
tuned against it: it measures how the detector does on formats it was not fitted
to. TUNED is what the rules were written and adjusted against. LOOKALIKES are
innocent lines that must never be refused. Every value here is random and fake.
Print the numbers with ``python -m tests.memory.secrets_corpus``.
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
    "k8s secret:\n  password: n4n306CwIfNPts7RRh4n4M13",
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
