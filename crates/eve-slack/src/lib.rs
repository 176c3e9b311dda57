//! The Slack channel (issue 23, docs/slack.md): the agent in Slack as eve 0.80.1's
//! `slackChannel` puts it there. Everything that decides is here, tested natively; the
//! `slack` component reads requests, calls the agent and Slack, and answers.
//!
//! - [`verify`]: Slack's v0 request signature and its five-minute window.
//! - [`inbound`]: what a verified request carries (the challenge, a mention or DM, a button
//!   click, or nothing to do), retries after a timeout, principals `slack:<team>:<user>`, and
//!   the `<slack_message>` text the model reads.
//! - [`render`]: the turn's events as Slack Web API calls (status, reply, snippet, buttons).
//! - [`hitl`]: questions and approvals as buttons, and the card once answered.
//! - [`web_api`]: the calls' wire format.
//! - [`words`]: what the channel writes, in eve's English or in Simplified Chinese.
//! - [`store`], [`sql`]: event ids already handled, and one session per thread.

pub mod hitl;
pub mod inbound;
pub mod render;
pub mod sql;
pub mod store;
pub mod verify;
pub mod web_api;
pub mod words;

#[cfg(test)]
mod tests;
