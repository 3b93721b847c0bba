// Passwords for the agent's browser (issue 25): the approval card asks the user to type one.
export default {
  en: {
    "approval.secret": "Type {what}. It goes to the page only: the agent never sees it.",
    "approval.secretLabel": "Password",
    "approval.secretAllow": "Type it in",
  },
  zh: {
    "approval.secret": "请输入{what}。它只会填到网页里，智能体看不到。",
    "approval.secretLabel": "密码",
    "approval.secretAllow": "填入",
  },
};
