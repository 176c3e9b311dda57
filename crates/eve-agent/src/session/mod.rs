//! A session's durable state: the tables and every SQL statement ([`store`]: sessions with
//! their leases, the event log, the inbox, memory, connection grants, attachments), the log
//! read back as the model's history and the open turn ([`transcript`]), and what a turn whose
//! runner died becomes ([`resume`]).

pub mod resume;
pub mod store;
pub mod transcript;
