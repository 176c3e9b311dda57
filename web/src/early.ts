// Loaded as a blocking <script src> in <head> (allowed by the CSP's script-src 'self'; no inline
// script): applies the desktop sidebar state from the `eve-chat-sidebar` cookie and the route's
// layout class to <html> before the first paint, so neither flashes.
import { routeClass, sidebarClosedFromCookie } from "./layout";

const root = document.documentElement;
if (sidebarClosedFromCookie(document.cookie)) root.classList.add("sidebar-closed");
root.classList.remove("route-home", "route-chat");
root.classList.add(routeClass(location.pathname));
