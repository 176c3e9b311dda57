// The approval card's own strings (issue 23, docs/approvals.md), in both languages: only the
// card's chunk (components/approval-card.tsx) imports them, so they stay out of the first-load
// JavaScript.
import { inLocale } from "./index";

const en = {
  title: "Approval needed",
  tool: "Tool",
  input: "Input",
  approve: "Approve",
  deny: "Deny",
  note: "Note for the agent (optional)",
  notePlaceholder: "Why, or what to do instead",
};

const zhCN: typeof en = {
  title: "需要批准",
  tool: "工具",
  input: "输入",
  approve: "批准",
  deny: "拒绝",
  note: "给智能体的备注（可选）",
  notePlaceholder: "原因，或改做什么",
};

/** Both languages, for the catalogue tests. */
export const approvalCardCatalogues = { en, "zh-CN": zhCN };

/** The card's strings in the page's current language. */
export const ta = inLocale(approvalCardCatalogues);
