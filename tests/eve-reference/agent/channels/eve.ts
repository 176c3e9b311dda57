// The reference's HTTP channel: eve's own `eveChannel` with an explicit route-auth walk.
//
// - A caller with no bearer token is let in by `localDev()`: only while this is an `eve dev`
//   server (eve sets EVE_DEV=1), so the suites can call the reference directly on loopback.
// - With EVE_JWT_SECRET set, a forwarding proxy's HS256 bearer JWT is verified by eve's
//   `jwtHmac` (issuer "eve-chat", audience "eve-agent": what eve-chat's proxy mints, see
//   crates/eve-agent/src/jwt.rs). A request that carries a bearer token which does not verify is
//   refused with 401 rather than falling through to `localDev()`, so a wrong secret shows.
//
// Without EVE_JWT_SECRET the walk is `localDev()` alone.
import { type AuthFn, UnauthenticatedError, extractBearerToken, jwtHmac, localDev, withAuthChallenges } from "eve/channels/auth";
import { eveChannel } from "eve/channels/eve";

function proxyToken(secret: string): AuthFn<Request> {
  const verify = jwtHmac({
    algorithm: "HS256",
    secret,
    issuer: "eve-chat",
    audiences: ["eve-agent"],
  });
  return withAuthChallenges(
    async (request: Request) => {
      const caller = await verify(request);
      if (caller) return caller;
      if (extractBearerToken(request.headers.get("authorization")) !== null) {
        throw new UnauthenticatedError({
          code: "invalid_token",
          message: "The bearer token is not valid.",
          challenges: [{ scheme: "Bearer", parameters: { error: "invalid_token" } }],
        });
      }
      return null;
    },
    [{ scheme: "Bearer" }],
  );
}

const secret = process.env.EVE_JWT_SECRET?.trim();

export default eveChannel({
  auth: secret ? [proxyToken(secret), localDev()] : [localDev()],
});
