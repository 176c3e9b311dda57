// Issue 23: a tool behind `always()`, so side-by-side's "approval" scenarios run the same on the
// reference and on eve-chat (run-all gives eve-chat's built-in get_weather the same policy
// through its tool_approvals variable). The answer is eve-chat's offline demo weather for Paris
// (crates/eve-agent/src/tools/builtin.rs, keys in serde_json's order), so what the fake model
// reads after an approval compares word for word.
import { defineTool } from "eve/tools";
import { always } from "eve/tools/approval";
import { z } from "zod";

export default defineTool({
  description: "Current weather for a city (a fixed, deterministic value).",
  inputSchema: z.object({ city: z.string() }),
  approval: always(),
  async execute({ city }) {
    return { city, condition: "light rain", humidityPct: 46, source: "offline demo data", temperatureC: 2, windKph: 30 };
  },
});
