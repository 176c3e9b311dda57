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

/** Pages of one segment (the shell serves them as the app: crates/eve-static APP_PAGES). */
export const PAGES = ["admin", "settings", "signup", "invite", "reset"] as const;
export type PageName = (typeof PAGES)[number];

export type Route = { name: "home" } | { name: "chat"; id: string } | { name: "project"; id: string } | { name: PageName } | { name: "not-found" };

export function parseRoute(pathname: string): Route {
  if (pathname === "/" || pathname === "") return { name: "home" };
  const page = (PAGES as readonly string[]).find((p) => pathname === `/${p}`);
  if (page) return { name: page as PageName };
  const m = /^\/(chat|project)\/([A-Za-z0-9_-]{1,128})$/.exec(pathname);
  if (m) return { name: m[1] as "chat" | "project", id: m[2]! };
  return { name: "not-found" };
}

/** The <html> classes the early script and the app set from the route. */
export const ROUTE_CLASSES = ["route-home", "route-chat", "route-page"];

/** The <html> class that puts the composer where the route wants it before the app runs (a
 * page of its own hides the prerendered home until the app draws it). */
export function routeClass(pathname: string): string {
  const name = parseRoute(pathname).name;
  return name === "chat" ? "route-chat" : name === "project" || (PAGES as readonly string[]).includes(name) ? "route-page" : "route-home";
}
