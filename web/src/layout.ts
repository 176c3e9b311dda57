// Tiny, dependency-free layout helpers shared by the early script and the app.

/** Desktop sidebar open/closed (seed SIDEBAR_COOKIE_NAME), values `open` | `closed`. */
export const SIDEBAR_COOKIE = "eve-chat-sidebar";

export function sidebarClosedFromCookie(cookie: string): boolean {
  for (const part of cookie.split(";")) {
    const [name, ...rest] = part.trim().split("=");
    if (name === SIDEBAR_COOKIE) return rest.join("=") === "closed";
  }
  return false;
}

export function sidebarCookie(open: boolean, secure: boolean): string {
  return `${SIDEBAR_COOKIE}=${open ? "open" : "closed"}; Path=/; Max-Age=31536000; SameSite=Lax${secure ? "; Secure" : ""}`;
}

export type Route = { name: "home" } | { name: "chat"; id: string } | { name: "not-found" };

export function parseRoute(pathname: string): Route {
  if (pathname === "/" || pathname === "") return { name: "home" };
  const m = /^\/chat\/([A-Za-z0-9_-]{1,128})$/.exec(pathname);
  if (m) return { name: "chat", id: m[1]! };
  return { name: "not-found" };
}

/** The <html> class that puts the composer where the route wants it before the app runs. */
export function routeClass(pathname: string): string {
  return parseRoute(pathname).name === "chat" ? "route-chat" : "route-home";
}
