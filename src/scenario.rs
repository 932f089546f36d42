//! A scenario is everything needed to rebuild a world: which recipe each client runs and the
//! world's config. It is the portable part of a trace.

use serde::{Deserialize, Serialize};
use zklab_model::path;
use zklab_model::{FaultBudget, FaultKind, World, WorldConfig};
use zklab_recipes::AnyRecipe;

/// Client counts beyond this are refused by the checker: exhaustive search is hopeless long
/// before. The simulator takes up to `zklab_sim::MAX_CLIENTS`.
pub const MAX_CLIENTS: usize = 8;

/// A server tick longer than a minute is not a ZooKeeper configuration anyone runs.
pub const MAX_TICK_MS: u32 = 60_000;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scenario {
    /// The recipe name of each client, in client order.
    pub recipes: Vec<String>,
    pub config: WorldConfig,
}

/// Input that cannot make a scenario, said in one line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadInput(pub String);

impl Scenario {
    /// The program that knows this scenario's recipes when one of them is not the catalogue's
    /// but registered by the running program (`zklab::cli::main_with`): its file name
    /// (`getdata_lock`), the same on any machine. A trace carries it, so that the installed
    /// `zklab`, which does not know the recipe, can say where the trace replays.
    pub fn registering_program(&self) -> Option<String> {
        if !self.recipes.iter().any(|name| zklab_recipes::is_registered(name)) {
            return None;
        }
        let program = std::env::args_os().next()?;
        Some(std::path::Path::new(&program).file_name()?.to_string_lossy().into_owned())
    }

    /// `clients` clients running `recipe` (one name for all, or a comma list of one per client).
    pub fn new(recipe: &str, clients: usize, config: WorldConfig) -> Result<Self, BadInput> {
        Scenario::with_limit(recipe, clients, config, MAX_CLIENTS)
    }

    /// As `new`, for a run that may have up to `limit` clients (a simulation).
    pub fn with_limit(recipe: &str, clients: usize, config: WorldConfig, limit: usize) -> Result<Self, BadInput> {
        if clients == 0 || clients > limit {
            return Err(BadInput(format!("--clients must be between 1 and {limit}, got {clients}")));
        }
        let names: Vec<String> = recipe.split(',').map(|s| s.trim().to_string()).collect();
        let recipes = match names.len() {
            1 => vec![names[0].clone(); clients],
            n if n == clients => names,
            n => {
                return Err(BadInput(format!(
                    "--recipe lists {n} recipes for {clients} clients (give one, or one per client)"
                )))
            }
        };
        let scenario = Scenario { recipes, config };
        scenario.validate_with(limit)?;
        Ok(scenario)
    }

    /// Checks what a hand-written or loaded scenario could get wrong.
    pub fn validate(&self) -> Result<(), BadInput> {
        self.validate_with(MAX_CLIENTS)
    }

    /// As `validate`, allowing up to `limit` clients.
    pub fn validate_with(&self, limit: usize) -> Result<(), BadInput> {
        if self.recipes.is_empty() || self.recipes.len() > limit {
            return Err(BadInput(format!("a scenario needs 1 to {limit} clients, got {}", self.recipes.len())));
        }
        let lock = &self.config.lock_path;
        path::validate(lock, false).map_err(|e| BadInput(format!("lock path: {e}")))?;
        if lock == "/" || path::parent(lock) != "/" {
            return Err(BadInput(format!("lock path must be a top-level node such as /lock, got {lock:?}")));
        }
        let mut names: Vec<&String> = self.recipes.iter().collect();
        names.sort();
        names.dedup();
        for name in names {
            zklab_recipes::build(name, lock).map_err(BadInput)?;
        }
        if self.config.rounds == 0 {
            return Err(BadInput("--rounds must be at least 1".to_string()));
        }
        let tick = self.config.server.tick_ms;
        if !(1..=MAX_TICK_MS).contains(&tick) {
            return Err(BadInput(format!("tick_ms must be between 1 and {MAX_TICK_MS}, got {tick}")));
        }
        if self.config.session_timeout_ms == 0 {
            return Err(BadInput("session_timeout_ms must be at least 1".to_string()));
        }
        Ok(())
    }

    pub fn world(&self) -> World<AnyRecipe> {
        let recipes = self
            .recipes
            .iter()
            .map(|name| zklab_recipes::build(name, &self.config.lock_path).expect("validated"))
            .collect();
        World::new(self.config.clone(), recipes)
    }

    /// The recipe names joined, for reports (`standard`, or `standard,naive`).
    pub fn recipe_label(&self) -> String {
        let mut names = self.recipes.clone();
        names.dedup();
        names.join(",")
    }

    pub fn faults(&self) -> Vec<FaultKind> {
        self.config.faults.enabled()
    }
}

/// Parses a fault list: names separated by commas, each once or `name=N` times, `all`, or
/// `none`.
/// The entries of a `--faults` list, each naming a fault (with `=value` or not), `all` or
/// `none`: refused when one is empty, one fault is named twice (`twice` says how to ask for
/// more), or `all` or `none` stands beside another.
pub fn fault_entries<'a>(list: &'a str, twice: &str) -> Result<Vec<&'a str>, BadInput> {
    let items: Vec<&str> = list.split(',').map(str::trim).collect();
    if items.iter().any(|i| i.is_empty()) {
        return Err(BadInput(format!("--faults `{list}` has an empty entry: name faults, `all` or `none`")));
    }
    let mut named = Vec::new();
    for &item in &items {
        let name = item.split_once('=').map_or(item, |(name, _)| name.trim());
        if named.contains(&name) {
            return Err(BadInput(format!("fault `{name}` is named twice ({})", twice.replace("kind", name))));
        }
        if items.len() > 1 && (name == "all" || name == "none") {
            return Err(BadInput(format!("`{name}` stands alone in --faults, got `{list}`")));
        }
        named.push(name);
    }
    Ok(items)
}

pub fn parse_faults(list: &str) -> Result<FaultBudget, BadInput> {
    let mut budget = FaultBudget::none();
    for item in fault_entries(list, "`kind=2` allows it twice")? {
        let (name, times) = match item.split_once('=') {
            Some((name, times)) => {
                let times =
                    times.trim().parse::<u32>().ok().filter(|t| (1..=MAX_FAULT_REPEATS).contains(t)).ok_or_else(
                        || BadInput(format!("fault `{item}`: give how many times, 1 to {MAX_FAULT_REPEATS}")),
                    )?;
                (name.trim(), times)
            }
            None => (item, 1),
        };
        match name {
            "all" => FaultKind::ALL.iter().filter(|k| k.in_all()).for_each(|k| budget.0[k.index()] = times),
            "none" => {}
            _ => {
                let kind = FaultKind::parse(name).ok_or_else(|| {
                    let known: Vec<_> = FaultKind::ALL.iter().map(|k| k.name()).collect();
                    BadInput(format!("unknown fault `{name}` (known: {}, all, none)", known.join(", ")))
                })?;
                budget.0[kind.index()] = times;
            }
        }
    }
    Ok(budget)
}

/// A count of rounds (1 to 254), or `unbounded`: what `--rounds` and a manifest's `rounds`
/// take. 255 is not a count: it is how the model spells unbounded, and is refused as a number.
pub fn parse_rounds(text: &str) -> Result<u8, String> {
    if text == "unbounded" {
        return Ok(zklab_model::UNBOUNDED_ROUNDS);
    }
    match text.parse::<u8>() {
        Ok(n) if (1..zklab_model::UNBOUNDED_ROUNDS).contains(&n) => Ok(n),
        _ => Err(format!("must be a number from 1 to 254 or `unbounded`, got {text:?}")),
    }
}

/// More repeats of one fault than an exhaustive search can use.
pub const MAX_FAULT_REPEATS: u32 = 8;
