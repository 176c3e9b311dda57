// One authored tool, so a tool turn (the fake model calls get_time for prompts with "tool")
// runs the same on the reference and on eve-chat. The answer is fixed: runs stay comparable.
import { defineTool } from "eve/tools";
import { z } from "zod";

export default defineTool({
  description: "Get the current time (a fixed, deterministic value).",
  inputSchema: z.object({ timezone: z.string().optional() }),
  async execute({ timezone }) {
    return { time: "2025-01-01T12:00:00Z", timezone: timezone ?? "UTC" };
  },
});
