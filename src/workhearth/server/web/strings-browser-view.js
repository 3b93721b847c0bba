// The agent's browser in the task stream (issue 25): thumbnails of the page after each action.
export default {
  en: {
    "browser.shot": "The agent's browser after this step",
    "browser.shotOf": "The agent's browser after: {line}",
    "browser.bigger": "Show bigger",
    "browser.close": "Close",
  },
  zh: {
    "browser.shot": "这一步之后智能体浏览器中的页面",
    "browser.shotOf": "智能体浏览器在这一步之后：{line}",
    "browser.bigger": "放大查看",
    "browser.close": "关闭",
  },
};
