// The admin page's Settings tab strings (issue 22, docs/runtime.md "Settings"), in both
// languages: only the admin chunk imports them, so they stay out of the first-load JavaScript.
import { locale } from ".";

const en = {
  tab: "Settings",
  intro: "System-wide settings. A change applies to the next turn, without a restart. A setting left unset uses the deployment's value (its Spin variable, else the built-in default), shown as the default.",
  loading: "Loading settings…",
  loadFailed: "The settings could not be loaded: {error}",
  save: "Save settings",
  saving: "Saving…",
  saved: "Settings saved.",
  saveFailed: "The settings were not saved: {error}",
  reset: "Use the default",
  resetDone: "{name} uses the default again.",
  isDefault: "Default (not set here)",
  isSet: "Set here",
  defaultIs: "Default: {value}",
  none: "none",
  noLimit: "no limit",
  firstModel: "The first model",
  labels: {
    instructions: "Agent instructions",
    defaultModel: "Default model",
    toolDisplay: "Tool calls in the chat",
    logModelRequests: "Log model requests",
    signupDomains: "Open sign-up domains",
    defaultTokensPerDay: "Default tokens per day",
    toolApprovals: "Tool approvals",
    outboundAllowedHosts: "Allowed private hosts",
  } as Record<string, string>,
  hints: {
    instructions: "The agent's base instructions (eve's instructions.md), at most 32 KiB. Memory, project instructions and skills are added after them.",
    defaultModel: "The model a new chat starts on.",
    toolDisplay: "How tool calls are shown in the chat.",
    logModelRequests: "The agent logs one line per model request: provider, model, URL, message count and tokens. Never keys or content.",
    signupDomains: "Email domains that may sign up without an invitation (accounts mode), separated by commas.",
    defaultTokensPerDay: "Model tokens a person without their own quota may use per UTC day; 0 is no limit.",
    toolApprovals: "One tool per line: name = never, once or always.",
    outboundAllowedHosts: "Hosts (host or host:port) that providers and MCP servers may use although they are local or private, separated by commas.",
  } as Record<string, string>,
  collapsed: "Collapsed",
  full: "Full",
  on: "on",
  off: "off",
  bytes: "{used} of {max} bytes",
  badApprovals: "Tool approvals, line {line}: write name = never, once or always.",
  badTokens: "Default tokens per day must be a whole number (0 for no limit).",
};

const zhCN: typeof en = {
  tab: "设置",
  intro: "全系统设置。更改会在下一轮对话生效，无需重启。未设置的项使用部署的值（其 Spin 变量，否则为内置默认值），显示为默认值。",
  loading: "正在加载设置…",
  loadFailed: "无法加载设置：{error}",
  save: "保存设置",
  saving: "正在保存…",
  saved: "设置已保存。",
  saveFailed: "设置未保存：{error}",
  reset: "使用默认值",
  resetDone: "{name} 已恢复为默认值。",
  isDefault: "默认（此处未设置）",
  isSet: "已在此处设置",
  defaultIs: "默认值：{value}",
  none: "无",
  noLimit: "不限",
  firstModel: "第一个模型",
  labels: {
    instructions: "智能体指令",
    defaultModel: "默认模型",
    toolDisplay: "对话中的工具调用",
    logModelRequests: "记录模型请求",
    signupDomains: "开放注册的域名",
    defaultTokensPerDay: "每日默认令牌数",
    toolApprovals: "工具审批",
    outboundAllowedHosts: "允许的私有主机",
  },
  hints: {
    instructions: "智能体的基础指令（eve 的 instructions.md），最多 32 KiB。记忆、项目指令和技能会附加在其后。",
    defaultModel: "新对话开始时使用的模型。",
    toolDisplay: "工具调用在对话中的显示方式。",
    logModelRequests: "智能体为每次模型请求记录一行日志：提供方、模型、URL、消息数和令牌数。从不记录密钥或内容。",
    signupDomains: "无需邀请即可注册的邮箱域名（账户模式），用逗号分隔。",
    defaultTokensPerDay: "没有个人配额的用户每个 UTC 日可使用的模型令牌数；0 表示不限。",
    toolApprovals: "每行一个工具：名称 = never、once 或 always。",
    outboundAllowedHosts: "即使是本地或私有地址，提供方和 MCP 服务器也可使用的主机（host 或 host:port），用逗号分隔。",
  },
  collapsed: "折叠",
  full: "完整",
  on: "开启",
  off: "关闭",
  bytes: "{used} / {max} 字节",
  badApprovals: "工具审批第 {line} 行：请写成 名称 = never、once 或 always。",
  badTokens: "每日默认令牌数必须是整数（0 表示不限）。",
};

export const adminSettingsCatalogues = { en, "zh-CN": zhCN };

/** The Settings tab's strings in the UI's language. */
export function tset(): typeof en {
  return locale === "zh-CN" ? zhCN : en;
}
