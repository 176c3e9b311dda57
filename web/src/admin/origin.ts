// Whether an edited URL leaves its origin (issue 32): the server drops a provider's stored key,
// and refuses an MCP server's move without its bearer token, when the scheme, host or port
// changes, so the forms say so before saving.

/** Whether `next` is on another origin than `saved` (an unparsable `next` counts as another). */
export function leavesOrigin(saved: string, next: string): boolean {
  const trimmed = next.trim();
  if (!trimmed || trimmed.replace(/\/+$/, "") === saved.replace(/\/+$/, "")) return false;
  try {
    return new URL(saved).origin !== new URL(trimmed).origin;
  } catch {
    return true;
  }
}
