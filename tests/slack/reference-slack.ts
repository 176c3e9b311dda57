// eve's own Slack channel for the side-by-side run (tests/slack/side-by-side.mjs copies this
// file into a per-run copy of tests/eve-reference as agent/channels/slack.ts): the bot token,
// the signing secret and the Slack Web API base (the simulator) from the environment.
import { slackChannel } from "eve/channels/slack";

export default slackChannel({
  api: { apiBaseUrl: process.env.SLACK_API_BASE_URL },
  credentials: {
    botToken: process.env.SLACK_BOT_TOKEN,
    signingSecret: process.env.SLACK_SIGNING_SECRET,
  },
});
