// Moving a chat into a project or out of one, as the sidebar and the project page do it: at once
// on screen, put back with a toast when the server refuses. Kept apart from projects.ts because
// it works on the shell's state, which itself names projects.
import type { ChatSummary } from "../api/types";
import type { Shell } from "../shell/context";
import { describeError, fmt, t } from "../i18n";
import { projectsApi, type Project, type ProjectChat } from "./projects";

/** The project a chat is in, as far as this page knows (null: none). */
export function projectOf(shell: Shell, chat: ProjectChat): string | null {
  const known = shell.chatProject[chat.id];
  return known !== undefined ? known : chat.projectId ?? null;
}

/** Moves a chat into a project or out of one: at once in the sidebar, back on a refusal. */
export async function moveChat(shell: Shell, chat: ChatSummary, to: Project | null): Promise<void> {
  const from = projectOf(shell, chat);
  const fromName = shell.projects.find((p) => p.id === from)?.name ?? "";
  shell.setChatProject(chat.id, to?.id ?? null);
  try {
    await projectsApi.moveChat(chat.id, to?.id ?? null);
    shell.toast(to ? fmt(t.projects.moved, { name: to.name }) : fmt(t.projects.movedOut, { name: fromName }), "info");
  } catch (err) {
    shell.setChatProject(chat.id, from);
    shell.toast(fmt(t.projects.moveFailed, { error: describeError(err) }));
  }
}
