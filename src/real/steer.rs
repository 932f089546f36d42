//! Steering a real run through a trace's steps (`zklab real --reproduce TRACE`): a
//! counterexample the checker or the simulator found, made to happen on a real ZooKeeper.
//!
//! The model applies a request the moment its step sends it. So before each step the driver
//! waits until every request sent is answered (the server has applied it) and every live
//! connection has answered a ping (every notification the server sent before has arrived):
//! the server then applies the requests in the trace's order, and a `Receive` hands the
//! client the next frame that arrived, which the model world kept in step checks is the one
//! the trace's step receives. Faults are the driver's exact ones (docs/real.md); a step the
//! driver cannot make happen on a real server (the container reaper; a lagging read on servers
//! without the lagging follower) stops the run with the reason, never a pass.

use super::driver::{Driver, Event};
use super::faults::unsupported;
use super::shadow::Standing;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use zklab_model::world::Sending;
use zklab_model::{ClientId, FaultKind, Input, Recipe, Step};

/// How long the wire may take to fall quiet before a step.
const QUIET: Duration = Duration::from_secs(5);

impl<R: Recipe> Driver<'_, R> {
    /// Takes `steps` one by one on the real servers; whether Ctrl-C stopped it.
    pub(super) fn steer(&mut self, steps: &[Step]) -> bool {
        for (k, step) in steps.iter().enumerate() {
            if self.target.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return true;
            }
            if let Err(why) = self.quiet() {
                self.cannot(*step, why);
                break;
            }
            if let Err(why) = self.take_step(*step) {
                self.cannot(*step, why);
                break;
            }
            if let Err(why) = self.quiet() {
                self.cannot(*step, why);
                break;
            }
            self.shadow.advance(u64::MAX, 0);
            if self.shadow.standing != Standing::Agrees {
                break;
            }
            let taken = self.shadow.steps.len();
            if taken != k + 1 || self.shadow.steps[k] != *step {
                let got = self.shadow.steps.get(k).map_or("nothing".to_string(), |s| format!("`{s}`"));
                self.cannot(*step, format!("the real run took {got} there"));
                break;
            }
        }
        false
    }

    /// Once every step is taken: lets the wire fall quiet (every reply and notification the
    /// servers sent has arrived) and lists what arrived for a client that no step took. A
    /// deadlock in the model is a deadlock for real only if this is empty. A wire that never
    /// falls quiet is the run's trouble, not the model's: the run is diverged (not reproduced).
    pub(super) fn after_the_end(&mut self) -> Vec<String> {
        if self.shadow.standing != Standing::Agrees {
            return Vec::new();
        }
        if let Err(why) = self.quiet() {
            let at_us = self.now_us();
            let why = format!("after the last step, the wire never fell quiet: {why}");
            self.shadow.standing = Standing::Diverged { client: 0, step: Step::Receive(0), at_us, why };
            return Vec::new();
        }
        let model = &self.shadow.world.clients;
        (0..self.clients.len())
            .flat_map(|i| {
                // What the model world still holds for the client arrived for real too.
                let expected = model[i].inbound.len();
                self.clients[i]
                    .inbound
                    .iter()
                    .skip(expected)
                    .map(move |input| format!("c{i}: {}", zklab_model::world::describe_input(input)))
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn cannot(&mut self, step: Step, why: String) {
        if self.shadow.standing == Standing::Agrees {
            let (client, at_us) = (step.client().unwrap_or_default(), self.now_us());
            self.shadow.standing = Standing::Diverged { client, step, at_us, why };
        }
    }

    /// Makes `step` happen on the real servers.
    fn take_step(&mut self, step: Step) -> Result<(), String> {
        let Some(i) = step.client().map(|c| c as usize) else {
            let why = match step {
                Step::Server(event) => unsupported(event.kind(), self.lagging.is_some()),
                _ => None,
            };
            let why = why.unwrap_or("the server's own moment cannot be chosen");
            return Err(format!("cannot steer these servers through {step}: {why}"));
        };
        match step {
            Step::Acquire(_) => self.handle(Event::Acquire(i as ClientId)),
            Step::Write(_) => self.handle(Event::Write(i as ClientId)),
            Step::Release(_) => self.handle(Event::Release(i as ClientId)),
            Step::Receive(_) => self.receive(i)?,
            Step::Reconnect(_) => self.reconnect(i),
            Step::Expire(_) => self.close_session(i),
            Step::Fault(fault, _) => {
                if let Some(why) = unsupported(fault.kind(), self.lagging.is_some()) {
                    return Err(format!("cannot steer these servers through {fault}: {why}"));
                }
                self.fault(fault.kind(), i);
            }
            Step::Lossy(fault, sending, _) => {
                if let Some(why) = unsupported(fault.kind(), self.lagging.is_some()) {
                    return Err(format!("cannot steer these servers through {fault}: {why}"));
                }
                self.clients[i].armed = Some(fault);
                match sending {
                    Sending::Receive => self.receive(i)?,
                    Sending::GiveUp => self.fault(FaultKind::GiveUp, i),
                    _ => self.take_step(sending.step(i as ClientId))?,
                }
                self.clients[i].armed = None;
            }
            Step::Resume(_) => self.resume(i),
            Step::Server(_) => unreachable!("answered above"),
            Step::CatchUp(_) => {
                if !self.catch_up(i) {
                    return Err("the client's connection is not on a lagging follower".into());
                }
            }
        }
        Ok(())
    }

    /// Hands client `i` the next thing that arrived for it.
    fn receive(&mut self, i: usize) -> Result<(), String> {
        let input = self.clients[i].inbound.pop_front().ok_or("nothing arrived for the step to receive")?;
        if matches!(input, Input::Watch(_)) {
            self.metrics.notifications += 1;
        }
        self.take(i, Sending::Receive, input);
        Ok(())
    }

    /// Waits until no request is on its way, no connection is being dropped, and every live
    /// connection has answered a ping sent now.
    fn quiet(&mut self) -> Result<(), String> {
        let since = Instant::now();
        let busy = |d: &Self| d.clients.iter().any(|c| !c.in_flight.is_empty() || c.cut.is_some());
        while busy(self) {
            if since.elapsed() > QUIET {
                return Err("a reply never came".to_string());
            }
            self.wait_for_a_frame();
        }
        let pinged: Vec<usize> = (0..self.clients.len()).filter(|&i| self.ping(i)).collect();
        while pinged.iter().any(|&i| self.clients[i].pings > 0) {
            if since.elapsed() > QUIET {
                return Err("a ping was never answered".to_string());
            }
            self.wait_for_a_frame();
        }
        Ok(())
    }

    fn wait_for_a_frame(&mut self) {
        if let Ok(arrival) = self.arrivals.recv_timeout(Duration::from_millis(20)) {
            self.arrived(arrival);
        }
        self.keep_alive();
    }
}
