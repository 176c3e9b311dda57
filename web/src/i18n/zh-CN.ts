// 简体中文消息目录。类型即英文目录的键集(en.ts 的 `Messages`):缺一个键或多一个键,
// TypeScript 编译都会失败;占位符 `{name}` 须与英文一致(i18n.test.ts 检查)。
// Chinese has no plural inflection: every `Plural` has `other` only.
import type { Messages } from "./en";

export const shell: Messages["shell"] = {
  notFound: "页面不存在",
  goToNewChat: "开始新聊天",
  notFoundBody: "这个地址上什么也没有。",
  documentTitle: "eve chat",
  openMenu: "打开菜单",
  openSidebar: "展开侧边栏",
  closeSidebar: "收起侧边栏",
  chatHistory: "聊天记录",
  newChat: "新聊天",
  searchChats: "搜索聊天",
  searchChatsTitle: "搜索聊天（Ctrl/⌘ + K）",
  chatsNav: "聊天",
  heroTitle: "有什么可以帮忙的？",
  homeFooter: "基于 Spin 的持久化、可断点续传的聊天。回答可能有误，重要信息请核实。",
  messageLabel: "消息",
  placeholderHome: "有问题，尽管问",
  sendMessage: "发送消息",
  typeToSend: "输入消息后即可发送",
  connections: "连接",
  connectionsTitle: "本轮对话可使用的连接",
  language: "语言",
  attachFiles: "添加文件",
  attachFilesTitle: "添加文件（也可以拖放或粘贴到这里）",
};

export const app: Messages["app"] = {
  deleted: "已删除“{title}”。",
  undo: "撤销",
  deleteFailed: "删除失败：{error}",
  pinFailed: "置顶失败：{error}",
  historyFailed: "无法加载聊天记录：{error}",
  moreChatsFailed: "无法加载更多聊天：{error}",
  sessionCheckFailed: "无法确认登录状态：{error}",
  signInFailed: "登录失败（{reason}）。",
  signInNotConfigured: "此服务器尚未配置登录。",
  signOutFailed: "退出登录失败：{error}",
  startNewChat: "开始新聊天",
  dismiss: "关闭",
  authErrors: {
    not_configured: "此服务器尚未配置登录",
    discovery_failed: "无法连接身份提供方",
    invalid_state: "此次登录不是在本浏览器中发起的，请重新开始",
    flow_expired: "登录用时超过 10 分钟，请重新开始",
    flow_used: "此登录链接已被使用，请重新开始",
    unavailable: "服务器暂时无法验证登录，请稍后再试",
    provider_error: "身份提供方拒绝了登录",
    token_exchange_failed: "身份提供方未接受登录代码",
    invalid_id_token: "无法验证身份提供方的应答",
    userinfo_failed: "身份提供方未提供你的身份信息",
    email_required: "身份提供方未提供电子邮件地址",
    https_required: "登录需要加密（安全）连接",
    account_exists: "使用此电子邮件地址的账号以密码登录，请用密码登录",
  },
};

export const auth: Messages["auth"] = {
  signIn: "登录",
  signingIn: "正在登录…",
  signOut: "退出登录",
  setupNeeded: "需要配置",
  notConfiguredTitle: "此服务器尚未配置登录",
  localDeveloper: "本地开发者",
  signedIn: "已登录",
  loginIntro: "请输入部署密码以继续，你的消息会保留。",
  password: "密码",
  cancel: "取消",
  incomplete: "登录未完成。",
  wrongPassword: "密码不正确。",
};

export const pages: Messages["pages"] = {
  setupNeededTitle: "需要配置。",
  setupMissing: "缺少：{missing}。",
  setupNotConfigured: "服务器尚未配置。",
  setupIncomplete: "配置未完成：{missing}",
  serverNotConfigured: "服务器尚未配置",
  messageTooLong: "消息最多 {max} 个字符。",
  authPending: "请先连接或跳过待处理的授权，再继续这个聊天",
  loadingChat: "正在加载聊天…",
  placeholderChat: "回复 eve",
  earlierMessages: "显示更早的消息",
  loadingEarlier: "正在加载更早的消息…",
};

export const composer: Messages["composer"] = {
  unavailable: "暂时无法使用",
  tooLong: "消息最多 {max} 个字符",
  sending: "正在发送",
  sendingTitle: "正在发送…",
  sendTitle: "发送（Enter）",
  stop: "停止回答",
  stopTitle: "停止",
  charCount: "{count} / {max}",
};

export const sidebar: Messages["sidebar"] = {
  searching: "正在搜索…",
  noResults: "没有与“{query}”匹配的聊天。",
  inMessages: "消息内容中有匹配",
  searchFailed: "搜索失败：{error}",
  more: "“{title}”的更多操作",
  moreTitle: "更多",
  exportMd: "导出为 Markdown",
  exportJson: "导出为 JSON",
  pin: "置顶",
  unpin: "取消置顶",
  pinnedHeading: "已置顶",
  historyHeading: "聊天",
  signInToSee: "登录后即可查看你的聊天。",
  noChats: "还没有聊天。",
  loading: "正在加载…",
  rename: "重命名",
  renameLabel: "重命名“{title}”",
  delete: "删除",
  deleteLabel: "删除“{title}”",
  titleLabel: "聊天标题",
  renameFailed: "重命名失败：{error}",
  rowTitle: "{title}\n更新于{when}",
};

export const shortcuts: Messages["shortcuts"] = {
  title: "键盘快捷键",
  close: "关闭",
  stop: "停止正在生成的回答",
  newChat: "新聊天",
  search: "搜索聊天",
  editLast: "编辑你的上一条消息",
  emptyComposer: "↑（输入框为空时）",
  help: "显示快捷键列表",
};

export const connections: Messages["connections"] = {
  menuLabel: "连接",
  none: "尚未配置任何连接。",
  disconnect: "断开 {name}",
  disconnected: "已断开 {name}",
  disconnectFailed: "无法断开 {name}：{error}",
};

export const messages: Messages["messages"] = {
  thinking: "正在思考…",
  thoughtProcess: "思考过程",
  agentAsks: "智能体提问",
  orType: "也可以在下方输入你的回答。",
  attachments: "附件",
  image: "图片",
  toolsCount: "{count} 个工具：{names}",
  toolRunning: "正在运行 {names}…",
  toolWaiting: "等待授权：{names}",
  toolAsking: "等待你的回答：{names}",
  toolInterrupted: "已中断 {what}",
  toolDeclined: "未连接：{names}",
  toolDenied: "已拒绝 {what}",
  toolDone: "已使用 {what}",
  toolStatus: { running: "运行中", waiting: "等待中", asking: "等待回答", done: "已完成", error: "出错", declined: "未连接", denied: "已拒绝", interrupted: "已中断" },
  authFor: "{name} 的授权",
  connect: "连接",
  connectTitle: "连接 {name}",
  noConnectLink: "该站点未提供登录链接",
  skip: "跳过",
  outcomeAuthorized: "已连接",
  outcomeDeclined: "已跳过",
  outcomeFailed: "失败",
  outcomeTimedOut: "已超时",
  answerApproved: "已批准",
  answerDenied: "已拒绝",
  answerCancelled: "已撤回",
  answerIgnored: "已跳过",
  answerInvalid: "回答无效",
};

export const notices: Messages["notices"] = {
  responseFailed: "回答生成失败。",
  sessionFailed: "会话失败。",
  responseStopped: "已停止回答。",
  contextCleared: "上下文已清除：智能体不再看得到上面的消息。",
  compacted: "较早的消息已被总结，以适应上下文长度。",
  sessionEnded: "此会话已结束，你的下一条消息将开始新的会话。",
};

export const actions: Messages["actions"] = {
  copy: "复制",
  copied: "已复制",
  copyLabel: "复制回答",
  copyFailed: "复制失败：浏览器不允许访问剪贴板。",
  retry: "重试",
  retryFailed: "重试失败的回答",
  retryStopped: "重试已停止的回答",
  edit: "编辑",
  editLabel: "编辑消息",
  save: "发送",
  cancel: "取消",
  regenerate: "重新生成",
  regenerateLabel: "重新生成回答",
  previous: "上一个版本",
  next: "下一个版本",
  version: "第 {index} 个版本，共 {count} 个",
};

export const markdown: Messages["markdown"] = {
  copy: "复制",
  copied: "已复制",
  copyFailed: "复制失败",
  copyLabel: "复制代码",
};

export const models: Messages["models"] = {
  menuLabel: "模型",
  menuTitle: "在这个聊天中回答的模型",
};

export const attachments: Messages["attachments"] = {
  remove: "移除 {name}",
  list: "附件",
  tooLarge: "{name} 超过了单个文件 {limit} 的上限。",
  wrongType: "无法添加 {name}：不支持这种类型的文件。",
  tooMany: "每条消息最多 {max} 个文件。",
  unreadable: "无法读取 {name}。",
  unnamed: "文件",
};

export const usage: Messages["usage"] = {
  tokens: { other: "{count} 个 token" },
  detail: "输入 {input} · 输出 {output}",
  chat: "本聊天累计 {count}",
};

export const runtime: Messages["runtime"] = {
  chatNotFound: "这个聊天不存在或已被删除。",
  authPendingSend: "请先连接或跳过待处理的授权，再发送消息。",
  sessionNotFound: "找不到智能体会话。",
  partlyUnsaved: "部分事件暂未保存，回答结束后会自动保存。",
  saveFailed: "无法保存聊天：{error}",
  stopFailed: "停止失败：{error}",
  skipFailed: "跳过失败：{error}",
};

export const account: Messages["account"] = {
  email: "电子邮件",
  password: "密码",
  loginIntro: "请使用电子邮件和密码登录，你的消息会保留。",
  noAccount: "还没有账号？",
  createAccount: "创建账号",
  forgotPassword: "忘记密码？请向管理员索取重置链接。",
  badEmail: "请输入有效的电子邮件地址。",
  roles: { admin: "管理员", member: "成员" },
  settingsTitle: "设置",
  adminLink: "管理",
  loadFailed: "无法加载你的设置：{error}",
};

export const ui: Messages["ui"] = {
  loading: "正在加载…",
  loadFailed: "加载失败：{error}",
  cancel: "取消",
  actions: "操作",
  status: "状态",
  copy: "复制",
  copied: "已复制",
  copyFailed: "复制失败：请选中文字后手动复制。",
  done: "完成",
};

export const errors: Messages["errors"] = {
  network: "无法连接服务器，请检查网络连接。",
  stream_disconnected: "回答完成前数据流已断开。",
  unauthorized: "登录已失效，请重新登录后继续。",
  forbidden: "你没有执行此操作的权限。",
  rate_limited: "请求过于频繁。",
  too_many_streams: "同时进行的回答太多，请等其中一个结束。",
  storage_full: "你的存储空间已满：请删除一些聊天以释放空间。",
  payload_too_large: "内容超出存储上限：请缩短内容，或开始新聊天并删除不再需要的聊天。",
  unsupported_media_type: "不支持发送这种类型的文件。",
  not_configured: "服务器尚未配置此功能。",
  upstream: "模型服务没有响应，请重试。",
  stream_version: "智能体的数据流版本不受本应用支持。",
  internal: "服务器出错了。",
  retryIn: "{error}请在 {wait}后重试。",
  seconds: { other: "{count} 秒" },
  minutes: { other: "{count} 分钟" },
  requestFailed: "请求失败（{status}）。",
  invalid_credentials: "电子邮件或密码不正确。",
  signup_closed: "此处不开放注册：请向管理员索取邀请。",
  invite_invalid: "此邀请无效：它已被使用、已撤销或已过期。请索取新的邀请。",
  reset_invalid: "此重置链接无效：它已被使用或已过期。请向管理员索取新的链接。",
  setup_token_invalid: "设置令牌不正确，或第一个管理员已经存在。",
  email_taken: "使用此电子邮件的账号已存在。",
  email_mismatch: "此邀请属于另一个电子邮件地址。",
  weak_password: "密码需要 10 到 256 个字符。",
  wrong_password: "当前密码不正确。",
  last_admin: "不能降级或停用最后一个启用的管理员。",
  quota_exceeded: "你今天的 token 用量已用完。请明天再试，或联系管理员。",
  model_not_allowed: "你的账号不能使用此模型，请选择其他模型。",
  token_limit: "你的令牌太多了：请先撤销一个。",
};
export const projects: Messages["projects"] = {
  heading: "项目",
  newProject: "新建项目",
  namePlaceholder: "项目名称",
  createFailed: "无法创建项目：{error}",
  loadFailed: "无法加载项目：{error}",
  showChats: "显示「{name}」中的对话",
  hideChats: "隐藏「{name}」中的对话",
  noChats: "此项目中还没有对话。",
  files: "文件",
  moveTo: "移到「{name}」",
  moveOut: "移出项目",
  moved: "已移到「{name}」。",
  movedOut: "已移出「{name}」。",
  moveFailed: "无法移动对话：{error}",
  tools: { read_file: "读取", write_file: "写入", glob: "列出", grep: "搜索" },
};

export const zhCN: Messages = { shell, app, auth, pages, composer, sidebar, shortcuts, connections, messages, notices, actions, markdown, models, attachments, usage, runtime, account, ui, errors, projects };
