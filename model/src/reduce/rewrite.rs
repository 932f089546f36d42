//! Rewriting the values a state's messages carry. Symmetry reduction renames clients and
//! renumbering ranks sequence numbers and zxids; both must reach every path and stat inside
//! every queued request, reply and event, and this walk over the messages is theirs to share.

use crate::request::{Op, OpResult};
use crate::{path, Input, Request, Response, Stat, WatchedEvent, ZkResult};
use std::cell::Cell;

/// A rewrite of paths, child listings and stats, carried into whole messages.
pub trait Rewrite {
    fn path(&self, p: &str) -> String;
    /// A getChildren listing of `parent`, in the order the server would give the new names.
    fn children(&self, parent: &str, names: &[String]) -> Vec<String>;
    fn stat(&self, stat: &Stat) -> Stat;
    /// A node's data, as a message or the tree carries it: unchanged unless a rewrite says
    /// otherwise (a rewrite that cannot see inside data notes that it met some).
    fn data(&self, data: &str) -> String {
        data.to_string()
    }

    fn request(&self, request: &Request) -> Request {
        let mut rewritten = request.clone();
        match &mut rewritten {
            Request::Create { path, .. }
            | Request::Delete { path, .. }
            | Request::Exists { path, .. }
            | Request::GetData { path, .. }
            | Request::SetData { path, .. }
            | Request::GetChildren { path, .. }
            | Request::Sync { path } => *path = self.path(path),
            Request::Multi { ops } => {
                for op in ops {
                    match op {
                        Op::Create { path, data, .. } | Op::SetData { path, data, .. } => {
                            *path = self.path(path);
                            *data = self.data(data);
                        }
                        Op::Delete { path, .. } | Op::Check { path, .. } => *path = self.path(path),
                    }
                }
            }
        }
        if let Request::Create { data, .. } | Request::SetData { data, .. } = &mut rewritten {
            *data = self.data(data);
        }
        rewritten
    }

    /// A result of `request` (the request before rewriting).
    fn result(&self, request: &Request, result: &ZkResult) -> ZkResult {
        let Ok(response) = result else { return result.clone() };
        Ok(match response {
            Response::Created { path, stat } => Response::Created { path: self.path(path), stat: self.stat(stat) },
            Response::Deleted => Response::Deleted,
            Response::Exists(stat) => Response::Exists(stat.as_ref().map(|s| self.stat(s))),
            Response::Data { data, stat } => Response::Data { data: self.data(data), stat: self.stat(stat) },
            Response::DataSet(stat) => Response::DataSet(self.stat(stat)),
            Response::Children { children, stat } => {
                Response::Children { children: self.children(request.path(), children).into(), stat: self.stat(stat) }
            }
            Response::Synced { path } => Response::Synced { path: self.path(path) },
            Response::Multi(results) => Response::Multi(
                results
                    .iter()
                    .map(|r| match r {
                        OpResult::Created { path } => OpResult::Created { path: self.path(path) },
                        OpResult::Deleted => OpResult::Deleted,
                        OpResult::DataSet(stat) => OpResult::DataSet(self.stat(stat)),
                        OpResult::Checked => OpResult::Checked,
                    })
                    .collect(),
            ),
        })
    }

    fn event(&self, event: &WatchedEvent) -> WatchedEvent {
        WatchedEvent { kind: event.kind, path: self.path(&event.path) }
    }

    fn input(&self, input: &Input) -> Input {
        match input {
            Input::Acquire | Input::Release | Input::Abandon | Input::State(_) => input.clone(),
            Input::Reply { request, result } => {
                Input::Reply { request: self.request(request), result: self.result(request, result) }
            }
            Input::Watch(event) => Input::Watch(self.event(event)),
        }
    }
}

/// Whether `input` names the node `path` anywhere: as a request's or an event's path, a created
/// node, or a child in a listing. A walk with the rewrite that changes nothing, noting the path.
pub fn mentions(input: &Input, path: &str) -> bool {
    struct Finder<'a> {
        path: &'a str,
        found: Cell<bool>,
    }
    impl Rewrite for Finder<'_> {
        fn path(&self, p: &str) -> String {
            if p == self.path {
                self.found.set(true);
            }
            p.to_string()
        }
        fn children(&self, parent: &str, names: &[String]) -> Vec<String> {
            if path::child_of(self.path, parent).is_some_and(|name| names.iter().any(|n| n == name)) {
                self.found.set(true);
            }
            names.to_vec()
        }
        fn stat(&self, stat: &Stat) -> Stat {
            *stat
        }
    }
    let finder = Finder { path, found: Cell::new(false) };
    finder.input(input);
    finder.found.get()
}
