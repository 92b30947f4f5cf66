//! hoodie's options in a DataFusion session: the `hoodie.*` and `spark.*` keys as config
//! extensions ([`session`]) and a statement's write options resolved over the table's
//! ([`write`]). A leaf: every statement's planning reads them, and they read nothing of it.

pub mod session;
pub mod write;
