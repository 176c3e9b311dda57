// The skills section's strings (issue 22, docs/skills.md), in both languages: only its chunk
// (components/skills.tsx) imports them, so they stay out of the first-load JavaScript.
import { inLocale } from "./index";

const en = {
  title: "Skills",
  intro: "Procedures the agent loads when a request matches their description (SKILL.md files, as eve reads them). Switch one off to keep it out of your chats.",
  loading: "Loading skills…",
  loadFailed: "The skills could not be loaded: {error}",
  none: "No skills yet. Import a SKILL.md file or a zipped skill folder.",
  columns: { name: "Name", description: "Description", scope: "Kind", enabled: "Enabled", actions: "Actions" },
  personal: "Yours",
  global: "Everyone's",
  shadowed: "Replaced by your skill of the same name",
  deferred: "Loaded only when named",
  enable: "Use {name} in my chats",
  import: "Import a skill",
  importHint: "A SKILL.md file (or another .md file with frontmatter), or a .zip of a skill folder.",
  importGlobal: "Import for everyone (admins)",
  importing: "Importing {name}…",
  imported: "Skill {name} imported.",
  importFailed: "{name} was not imported: {error}",
  delete: "Delete",
  deleteLabel: "Delete the skill {name}",
  deleted: "Skill {name} deleted.",
  failed: "That did not work: {error}",
};

const zhCN: typeof en = {
  title: "技能",
  intro: "当请求与技能描述相符时，智能体会加载这些操作步骤（SKILL.md 文件，按 eve 的规则读取）。关闭某个技能后，它不会出现在你的对话中。",
  loading: "正在加载技能…",
  loadFailed: "无法加载技能：{error}",
  none: "还没有技能。导入一个 SKILL.md 文件或压缩的技能文件夹。",
  columns: { name: "名称", description: "描述", scope: "类型", enabled: "启用", actions: "操作" },
  personal: "我的",
  global: "所有人的",
  shadowed: "已被你的同名技能取代",
  deferred: "仅在点名时加载",
  enable: "在我的对话中使用 {name}",
  import: "导入技能",
  importHint: "SKILL.md 文件（或其他带前言的 .md 文件），或技能文件夹的 .zip 压缩包。",
  importGlobal: "为所有人导入（管理员）",
  importing: "正在导入 {name}…",
  imported: "技能 {name} 已导入。",
  importFailed: "{name} 未能导入：{error}",
  delete: "删除",
  deleteLabel: "删除技能 {name}",
  deleted: "技能 {name} 已删除。",
  failed: "操作失败：{error}",
};

export const skillsPageCatalogues = { en, "zh-CN": zhCN };

/** The skills section's strings in the UI's language. */
export const ts = inLocale(skillsPageCatalogues);
