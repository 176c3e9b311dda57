//! Model usage, quotas and model access (issue 20, `docs/accounts.md`): recorded by the agent
//! as turns settle, enforced by the agent before a turn starts, read by the admin pages.
