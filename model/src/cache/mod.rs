//! What the model remembers only to be fast: nothing here is part of a state's identity or
//! changes what a recipe can observe. `memo`: a value derived from a shared part (a client, a
//! tree, the session and watch tables), computed at most once and carried by every state that
//! shares the part (the memo fields of `tree::DataTree` and the server's tables are of its
//! types; a client's are gathered in `client::ClientCache`). `rewritten`: the parts a thread ranked or renamed lately, each by the part
//! and what the rewriting reads of it, so a part met again is not rewritten again. A memo is
//! never compared or hashed, and a copy of its owner starts it empty; the differential test
//! holds the checker, which uses both, to a reference checker that uses neither.

pub mod client;
pub mod memo;
pub mod rewritten;
