// Per-view strings added for phone width and small fixes.
export default {
  en: {
    "approval.alwaysHint": "Allow this tool without asking again while this task runs. Other tasks still ask.",
    "audit.task": "Task",
    "chat.sendAnyway": "Start in this folder anyway",
    "chat.warnSystem": "{path} is a system folder: the agent could read and change files your computer needs to run. Choose a project folder, or press “{button}” to start there.",
    "chat.warnHome": "{path} is your whole home folder: the agent could read and change everything in it (keys, mail, other projects). Choose a project folder, or press “{button}” to start there.",
    "memory.alreadySaved": "Already saved: this memory existed, nothing was added",
    "memory.undone": "Memory restored",
  },
  zh: {
    "approval.alwaysHint": "这个任务运行期间不再询问这个工具。其他任务仍会询问。",
    "audit.task": "任务",
    "chat.sendAnyway": "仍在这个文件夹里开始",
    "chat.warnSystem": "{path} 是系统文件夹：智能体可能读取并改动电脑运行所需的文件。请选择一个项目文件夹，或点“{button}”在这里开始。",
    "chat.warnHome": "{path} 是你的整个主目录：智能体可能读取并改动里面的一切（密钥、邮件、其他项目）。请选择一个项目文件夹，或点“{button}”在这里开始。",
    "memory.alreadySaved": "已经保存过：这条记忆本来就有，没有重复添加",
    "memory.undone": "记忆已恢复",
  },
};
