// Issue 23: a tool behind `once()` (approval the first time in a session only), matched by
// eve-chat's built-in recall under the same policy (run-all's tool_approvals variable).
import { defineTool } from "eve/tools";
import { once } from "eve/tools/approval";
import { z } from "zod";

export default defineTool({
  description: "Reads everything remembered about the user.",
  inputSchema: z.object({}),
  approval: once(),
  async execute() {
    return { facts: [] };
  },
});
