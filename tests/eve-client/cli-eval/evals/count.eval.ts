// One small deterministic eval: eve-chat's demo model streams `1 2 3` for "count to 3".
import { defineEval } from "eve/evals";
import { includes } from "eve/evals/expect";

export default defineEval({
  description: "eve-chat's demo model counts, reached with an API token (EVE_EVAL_AUTH_TOKEN).",
  async test(t) {
    const turn = await t.send("count to 3");
    t.succeeded();
    t.check(turn.message, includes("1 2 3"));
  },
});
