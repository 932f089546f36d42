//! A trace replayed into what the HTML timeline draws: the initial state and the state after
//! each step (beliefs, links, the nodes under the lock and the watches on them, and each
//! property judged by the model's own `Property::holds`/`allows`), and the messages each step
//! sends as arrows between lanes. Lane 0 is the server, lane `c + 1` client `c`.

use crate::trace::{Trace, TraceError};
use serde::Serialize;
use std::collections::VecDeque;
use zklab_model::property::Kind;
use zklab_model::world::{describe_input, describe_request, Client, Link, Note};
use zklab_model::{Belief, ClientFault, Input, Property, Recipe, SessionId, Step, World, ZkError};

/// Everything the page shows, as its script reads it.
#[derive(Serialize)]
pub struct Page {
    pub title: String,
    pub property: String,
    pub property_says: String,
    pub summary: String,
    pub lock_path: String,
    /// "server", then one label per client.
    pub lanes: Vec<String>,
    /// Steps carry virtual time (a simulated run's trace).
    pub timed: bool,
    /// The step where a liveness cycle starts (the state after the last step equals the one
    /// before it).
    pub cycle_start: Option<usize>,
    /// Frame 0 is the initial state; frame `i + 1` the state after step `i`.
    pub frames: Vec<Frame>,
}

#[derive(Serialize)]
pub struct Frame {
    /// The step that led here (none for the initial state).
    pub step: Option<String>,
    /// Its lane.
    pub lane: usize,
    /// The fault the step is, if it is one.
    pub fault: Option<String>,
    pub time_us: Option<u64>,
    /// The step in a few words, drawn beside it: what it handled, or what it is.
    pub label: String,
    /// What the step did, as the text timeline says it.
    pub notes: Vec<String>,
    pub arrows: Vec<Arrow>,
    pub clients: Vec<ClientView>,
    pub nodes: Vec<NodeView>,
    /// Each property that applies, and whether it holds here (safety) or allowed the step
    /// (transition).
    pub checks: Vec<(String, bool)>,
    /// This frame shows the violation: the last one for a safety or transition property or a
    /// deadlock, every frame of the cycle for a liveness cycle.
    pub violation: bool,
    /// The session the server expired at this step, named with its client ("c1's session s3").
    pub expired: Option<String>,
}

/// A message: from lane and frame to lane and frame (a reply travels from the step that sent
/// it to the step where its client handles it).
#[derive(Serialize)]
pub struct Arrow {
    pub from: (usize, usize),
    pub to: (usize, usize),
    /// request, reply, event, local (the client library's own: Disconnected, ConnectionLoss) or
    /// lost (a request that never reached the server).
    pub kind: &'static str,
    pub label: String,
}

#[derive(Serialize)]
pub struct ClientView {
    /// idle, acquiring, holding, suspended or releasing.
    pub belief: &'static str,
    pub token: Option<i64>,
    pub session: String,
    /// The server has expired the client's session (it learns so when it reconnects).
    pub expired: bool,
    /// up, down (reconnecting), partitioned, crashed or paused.
    pub link: &'static str,
    /// Messages waiting to be handled, in the order they will be.
    pub inbound: usize,
    pub queued: Vec<String>,
}

#[derive(Serialize)]
pub struct NodeView {
    pub path: String,
    /// The client whose session owns the ephemeral node ("c0"), a session no client has any
    /// more ("s3"), or nothing for a persistent node.
    pub owner: Option<String>,
    pub data: String,
    /// Clients with a data or exist watch here, and clients with a child watch.
    pub watched_by: Vec<String>,
    pub children_watched_by: Vec<String>,
    /// A watched path with no node (an exist watch waits for its creation).
    pub absent: bool,
}

/// Replays `trace` into its page.
pub fn page(trace: &Trace) -> Result<Page, TraceError> {
    let mut world = trace.scenario.world();
    let lanes = std::iter::once("server".to_string())
        .chain(world.clients.iter().enumerate().map(|(i, c)| format!("c{i} {}", c.recipe.name())))
        .collect();
    let applicable = Property::applicable(&world);
    let last = trace.steps.len();
    let violation = |frame: usize| match trace.verdict.cycle_start {
        Some(start) => frame > start,
        None => frame == last,
    };
    let mut inbound = Inbound::new(world.clients.len());
    let mut frames = vec![Frame {
        step: None,
        lane: 0,
        label: String::new(),
        fault: None,
        time_us: trace.times_us.first().map(|_| 0),
        notes: Vec::new(),
        arrows: Vec::new(),
        clients: clients(&world),
        nodes: nodes(&world),
        checks: checks(&applicable, None, &world),
        violation: last == 0,
        expired: None,
    }];
    for (i, step) in trace.steps.iter().enumerate() {
        let before = world.clone();
        let mut log = Some(Vec::new());
        world.apply_logged(*step, &mut log).map_err(|_| TraceError::NotEnabled(i, *step))?;
        let frame = i + 1;
        // Lane 0 is the server's, where its own events are drawn.
        let lane = step.client().map_or(0, |c| c as usize + 1);
        let notes = log.unwrap_or_default();
        let mut arrows = requests(&notes, lane, frame);
        arrows.extend(notifications(&notes, &before, &world, frame));
        arrows.extend(inbound.advance(&before, *step, &world, frame));
        frames.push(Frame {
            step: Some(step.to_string()),
            lane,
            label: label(*step, &notes),
            fault: fault(*step),
            time_us: trace.times_us.get(i).copied(),
            notes: notes.iter().map(|n| note_text(n, &before, &world)).collect(),
            arrows,
            clients: clients(&world),
            nodes: nodes(&world),
            checks: checks(&applicable, Some((&before, *step)), &world),
            violation: violation(frame),
            expired: notes.iter().find_map(|n| match n {
                Note::Expired(session) => Some(session_text(*session, &before, &world)),
                _ => None,
            }),
        });
    }
    let property = trace.verdict.property;
    Ok(Page {
        title: format!("{} with {} clients: {property} violated", trace.scenario.recipe_label(), world.clients.len()),
        property: property.to_string(),
        property_says: property.summary().to_string(),
        summary: trace.summary.clone(),
        lock_path: world.config().lock_path.clone(),
        lanes,
        timed: !trace.times_us.is_empty(),
        cycle_start: trace.verdict.cycle_start,
        frames,
    })
}

/// The fault a step is, as the timeline labels it. The expire fault cuts the client off; the
/// session expires later, at the server's own step (marked there with `Frame::expired`).
fn fault(step: Step) -> Option<String> {
    match step {
        Step::Fault(ClientFault::Expire, _) => Some("cut off past the session timeout".to_string()),
        Step::Fault(fault, _) => Some(fault.to_string()),
        Step::Lossy(fault, ..) => Some(fault.to_string()),
        Step::Server(event) => Some(event.to_string()),
        _ => None,
    }
}

/// The client whose session `session` is (before the step or after it), else none.
fn client_of<R: Recipe>(session: SessionId, before: &World<R>, after: &World<R>) -> Option<usize> {
    let find = |w: &World<R>| w.clients.iter().position(|c| c.session == session);
    find(after).or_else(|| find(before))
}

/// A session as the pages name it: by its client ("c1's session s3"), or alone when no client
/// has it.
pub(crate) fn session_text<R: Recipe>(session: SessionId, before: &World<R>, after: &World<R>) -> String {
    match client_of(session, before, after) {
        Some(c) => format!("c{c}'s session {session}"),
        None => format!("session {session}"),
    }
}

/// A note as the pages show it: as the text timeline says it, with a notified session named by
/// its client.
pub(crate) fn note_text<R: Recipe>(note: &Note, before: &World<R>, after: &World<R>) -> String {
    match note {
        Note::Notified { session, event } => {
            format!("   event {:?} {} queued for {}", event.kind, event.path, session_text(*session, before, after))
        }
        Note::Expired(session) => format!("the server expires {}", session_text(*session, before, after)),
        other => other.to_string(),
    }
}

/// The watch notifications a step queued: one arrow from the server to each client it wakes, at
/// the step itself, so that a release that wakes the whole queue is drawn as a fan.
pub(crate) fn notifications<R: Recipe>(
    notes: &[Note],
    before: &World<R>,
    after: &World<R>,
    frame: usize,
) -> Vec<Arrow> {
    let notified = notes.iter().filter_map(|note| match note {
        Note::Notified { session, event } => Some((client_of(*session, before, after)?, event)),
        _ => None,
    });
    notified
        .map(|(c, event)| Arrow {
            from: (0, frame),
            to: (c + 1, frame),
            kind: "event",
            label: format!("{:?} {}", event.kind, event.path),
        })
        .collect()
}

/// What the step handled (a reply, an event, a state change), else its own name.
fn label(step: Step, notes: &[Note]) -> String {
    let handled = notes.iter().find_map(|note| match note {
        Note::Handled(input) => Some(describe_input(input)),
        _ => None,
    });
    handled.unwrap_or_else(|| step.to_string().split(' ').next().unwrap_or_default().to_string())
}

/// The requests a step sent: to the server, or lost on the way.
fn requests(notes: &[Note], lane: usize, frame: usize) -> Vec<Arrow> {
    let sent = notes.iter().filter_map(|note| match note {
        Note::Request { request, result } => Some((request, result.is_some())),
        _ => None,
    });
    sent.map(|(request, applied)| Arrow {
        from: (lane, frame),
        to: (0, frame),
        kind: if applied { "request" } else { "lost" },
        label: describe_request(request),
    })
    .collect()
}

/// What each client has been sent and not yet handled, with the frame that sent it: a message
/// is drawn from where it was sent to where it is handled.
struct Inbound {
    queues: Vec<VecDeque<(usize, Input)>>,
}

impl Inbound {
    fn new(clients: usize) -> Self {
        Inbound { queues: vec![VecDeque::new(); clients] }
    }

    /// Follows every client's queue across a step: the message the step handled becomes an
    /// arrow, and what was added is remembered with this frame. A queue the step cleared (an
    /// expired handle, a crash) keeps only what still heads the new one.
    fn advance<R: Recipe>(&mut self, before: &World<R>, step: Step, after: &World<R>, frame: usize) -> Vec<Arrow> {
        let mut arrows = Vec::new();
        for (c, queue) in self.queues.iter_mut().enumerate() {
            let lane = c + 1;
            if step == Step::Receive(c as zklab_model::ClientId) && before.clients[c].inbound.front().is_some() {
                if let Some((sent, input)) = queue.pop_front() {
                    let (kind, from) = origin(&input, lane);
                    // A watch event was drawn where it was queued (`notifications`).
                    if kind != "event" {
                        arrows.push(Arrow {
                            from: (from, sent),
                            to: (lane, frame),
                            kind,
                            label: describe_input(&input),
                        });
                    }
                }
            }
            let now = &after.clients[c].inbound;
            let kept = (0..=queue.len().min(now.len()))
                .rev()
                .find(|&k| queue.iter().skip(queue.len() - k).map(|(_, m)| m).eq(now.iter().take(k)))
                .unwrap_or(0);
            queue.drain(..queue.len() - kept);
            queue.extend(now.iter().skip(kept).map(|m| (frame, m.clone())));
        }
        arrows
    }
}

/// Who sent a message a client handles: the server (a reply, a watch event), or the client's
/// own library (a state change, a request failed for a lost connection).
fn origin(input: &Input, lane: usize) -> (&'static str, usize) {
    match input {
        Input::Reply { result: Err(ZkError::ConnectionLoss), .. } | Input::State(_) => ("local", lane),
        Input::Reply { .. } => ("reply", 0),
        Input::Watch(_) => ("event", 0),
        Input::Acquire | Input::Release | Input::Abandon => ("local", lane),
    }
}

pub(crate) fn clients<R: Recipe>(world: &World<R>) -> Vec<ClientView> {
    let view = |c: &Client<R>| {
        let (belief, token) = match c.belief() {
            Belief::Idle => ("idle", None),
            Belief::Acquiring => ("acquiring", None),
            Belief::Holding { token } => ("holding", Some(token)),
            Belief::Suspended { token } => ("suspended", Some(token)),
            Belief::Releasing => ("releasing", None),
        };
        let link = match c.link {
            _ if c.crashed => "crashed",
            _ if c.paused => "paused",
            Link::Up => "up",
            Link::Down => "down",
            Link::Partitioned => "partitioned",
        };
        let queued = c.inbound.iter().map(describe_input).collect();
        let expired = !world.server.is_alive(c.session);
        ClientView { belief, token, session: c.session.to_string(), expired, link, inbound: c.inbound.len(), queued }
    };
    world.clients.iter().map(view).collect()
}

/// The nodes at and under the lock path, with their owners and watchers.
pub(crate) fn nodes<R: Recipe>(world: &World<R>) -> Vec<NodeView> {
    let client_of = |session| world.clients.iter().position(|c| c.session == session).map(|c| format!("c{c}"));
    // Each client's data/exist watches and child watches, as the server holds them.
    let watches: Vec<(String, Vec<String>, Vec<String>)> = (world.clients.iter().enumerate())
        .map(|(i, c)| {
            let (data, children) = world.server.watches_of(c.session);
            (format!("c{i}"), data, children)
        })
        .collect();
    let watchers = |path: &str, child: bool| -> Vec<String> {
        let on = |data: &[String], children: &[String]| match child {
            true => children.iter().any(|p| p == path),
            false => data.iter().any(|p| p == path),
        };
        watches.iter().filter(|(_, data, children)| on(data, children)).map(|(c, ..)| c.clone()).collect()
    };
    let tree = world.server.tree();
    let watched = watches.iter().flat_map(|(_, data, children)| data.iter().chain(children));
    let mut paths: Vec<&String> = tree.iter().map(|(path, _)| path).chain(watched).collect();
    paths.retain(|path| world.under_lock(path));
    paths.sort();
    paths.dedup();
    let view = |path: &String| {
        let node = tree.get(path);
        NodeView {
            path: path.clone(),
            owner: node.and_then(|n| n.owner).map(|s| client_of(s).unwrap_or_else(|| s.to_string())),
            data: node.map(|n| n.data.clone()).unwrap_or_default(),
            watched_by: watchers(path, false),
            children_watched_by: watchers(path, true),
            absent: node.is_none(),
        }
    };
    paths.into_iter().map(view).collect()
}

/// Each applicable safety and transition property judged at this frame.
pub(crate) fn checks<R: Recipe>(
    applicable: &[Property],
    step: Option<(&World<R>, Step)>,
    world: &World<R>,
) -> Vec<(String, bool)> {
    let judged = applicable.iter().filter_map(|p| match p.kind() {
        Kind::Safety => Some((p.to_string(), p.holds(world))),
        Kind::Transition => Some((p.to_string(), step.is_none_or(|(before, step)| p.allows(before, step, world)))),
        _ => None,
    });
    judged.collect()
}
