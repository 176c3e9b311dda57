// A loopback HTTP proxy in front of the app under test that cuts stream connections mid-event:
// the client talks to the proxy, the proxy forwards every request (Host rewritten to the target,
// every other header — cookie, origin, sec-fetch-site — passed through) and, for the first
// `cuts.length` successful stream GETs, destroys the client's socket after `cuts[i]` complete
// NDJSON events plus `partialBytes` bytes of the next one. That is a real transport failure
// (undici reports "terminated"), not a clean end of the response, so what follows is the eve
// client's own reconnect loop.
import http from "node:http";

const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "proxy-connection", "upgrade", "te", "trailer"]);

export async function startCuttingProxy(target, { cuts = [5], partialBytes = 12 } = {}) {
  const upstream = new URL(target);
  if (upstream.protocol !== "http:") throw new Error(`the cutting proxy speaks plain http only, not ${upstream.protocol}`);
  const log = [];
  const pendingCuts = [...cuts];
  const sockets = new Set();

  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://proxy.invalid");
    const entry = {
      method: req.method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { ...req.headers },
      status: undefined,
      eventsForwarded: 0,
      cut: false,
    };
    log.push(entry);
    const headers = { ...req.headers, host: upstream.host };
    for (const h of HOP_BY_HOP) delete headers[h];
    const up = http.request(
      { hostname: upstream.hostname, port: upstream.port || 80, method: req.method, path: req.url, headers },
      (ur) => {
        entry.status = ur.statusCode;
        const outHeaders = {};
        for (const [k, v] of Object.entries(ur.headers)) if (!HOP_BY_HOP.has(k)) outHeaders[k] = v;
        res.writeHead(ur.statusCode, outHeaders);
        res.flushHeaders();
        const isStream = req.method === "GET" && url.pathname.endsWith("/stream") && ur.statusCode === 200;
        const cutAfter = isStream ? pendingCuts.shift() : undefined;
        let complete = 0;
        let lineLength = 0;
        ur.on("data", (chunk) => {
          if (entry.cut) return;
          if (cutAfter === undefined) {
            countEvents(chunk);
            res.write(chunk);
            return;
          }
          for (let i = 0; i < chunk.length; i += 1) {
            if (chunk[i] === 0x0a) {
              if (lineLength > 0) complete += 1;
              lineLength = 0;
            } else {
              lineLength += 1;
            }
            if (complete >= cutAfter && lineLength >= partialBytes) {
              entry.cut = true;
              entry.eventsForwarded = complete;
              res.write(chunk.subarray(0, i + 1), () => {
                // let the partial bytes reach the client, then fail the connection
                setTimeout(() => res.socket?.destroy(), 20);
              });
              ur.destroy();
              return;
            }
          }
          entry.eventsForwarded = complete;
          res.write(chunk);
        });
        ur.on("end", () => {
          if (!entry.cut) res.end();
        });
        ur.on("error", () => res.destroy());
        function countEvents(buf) {
          for (const b of buf) {
            if (b === 0x0a) {
              if (lineLength > 0) entry.eventsForwarded += 1;
              lineLength = 0;
            } else {
              lineLength += 1;
            }
          }
        }
      },
    );
    up.on("error", (error) => {
      entry.error = error.message;
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "text/plain" });
        res.end(`proxy: ${error.message}`);
      } else {
        res.destroy();
      }
    });
    // the client went away (its own abort, or our cut): stop the upstream request too
    res.on("close", () => up.destroy());
    req.pipe(up);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    log,
    /** The stream GETs seen so far. */
    streams: () => log.filter((e) => e.method === "GET" && e.path.endsWith("/stream")),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
