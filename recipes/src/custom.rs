//! A user's own recipe inside `AnyRecipe`, so that everything that runs recipes by name (the
//! command line, trace files, the explorer, the simulator) runs it as it runs the catalogue's.
//!
//! `AnyRecipe` is an enum so that a world's clients can mix recipes and still be compared and
//! hashed as plain values. A user's type is not one of its variants, so `Custom` erases it
//! behind `DynRecipe`, a copy of the `Recipe` trait that can be made into an object, with
//! equality and hashing that compare the concrete type first: two recipes of different types
//! are never equal, and hash apart.

use std::any::{Any, TypeId};
use std::fmt::Debug;
use std::hash::{Hash, Hasher};
use zklab_model::{
    Belief, ClientId, Ctx, Input, Mode, Numbers, Property, Recipe, Renamer, Renaming, Renumber, Request,
};

/// `Recipe` as an object. Implemented for every `Recipe`; a user never implements it.
pub trait DynRecipe: Debug + Send + Sync + 'static {
    fn clone_box(&self) -> Box<dyn DynRecipe>;
    fn as_any(&self) -> &dyn Any;
    fn eq_dyn(&self, other: &dyn DynRecipe) -> bool;
    fn hash_dyn(&self, state: &mut dyn Hasher);
    fn name(&self) -> String;
    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>);
    fn belief(&self) -> Belief;
    fn mode(&self) -> Mode;
    fn owned_node(&self) -> Option<&str>;
    fn owned_nodes(&self) -> Vec<&str>;
    fn waits_on_one_node(&self) -> bool;
    fn accepts_reentry(&self) -> bool;
    fn can_abandon(&self) -> bool;
    fn applies(&self, property: Property) -> bool;
    fn renamed_box(&self, r: &Renamer) -> Option<Box<dyn DynRecipe>>;
    fn rename_name(&self, name: &str, r: &Renaming) -> String;
    fn renumbered_box(&self, client: ClientId, r: &Renumber) -> Option<Box<dyn DynRecipe>>;
    fn renumbered_by_replay(&self) -> bool;
    fn renumber_name(&self, name: &str, n: &Numbers) -> String;
    fn renumber_data(&self, data: &str, n: &Numbers) -> Option<String>;
    fn renumber_token(&self, token: i64, n: &Numbers) -> i64;
}

impl<R: Recipe> DynRecipe for R {
    fn clone_box(&self) -> Box<dyn DynRecipe> {
        Box::new(self.clone())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn eq_dyn(&self, other: &dyn DynRecipe) -> bool {
        other.as_any().downcast_ref::<R>() == Some(self)
    }
    fn hash_dyn(&self, mut state: &mut dyn Hasher) {
        TypeId::of::<R>().hash(&mut state);
        self.hash(&mut state);
    }
    fn name(&self) -> String {
        Recipe::name(self)
    }
    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        Recipe::handle(self, ctx, input, out)
    }
    fn belief(&self) -> Belief {
        Recipe::belief(self)
    }
    fn mode(&self) -> Mode {
        Recipe::mode(self)
    }
    fn owned_node(&self) -> Option<&str> {
        Recipe::owned_node(self)
    }
    fn owned_nodes(&self) -> Vec<&str> {
        Recipe::owned_nodes(self)
    }
    fn waits_on_one_node(&self) -> bool {
        Recipe::waits_on_one_node(self)
    }
    fn accepts_reentry(&self) -> bool {
        Recipe::accepts_reentry(self)
    }
    fn can_abandon(&self) -> bool {
        Recipe::can_abandon(self)
    }
    fn applies(&self, property: Property) -> bool {
        Recipe::applies(self, property)
    }
    fn renamed_box(&self, r: &Renamer) -> Option<Box<dyn DynRecipe>> {
        Recipe::renamed(self, r).map(|x| Box::new(x) as Box<dyn DynRecipe>)
    }
    fn rename_name(&self, name: &str, r: &Renaming) -> String {
        Recipe::rename_name(self, name, r)
    }
    fn renumbered_box(&self, client: ClientId, r: &Renumber) -> Option<Box<dyn DynRecipe>> {
        Recipe::renumbered(self, client, r).map(|x| Box::new(x) as Box<dyn DynRecipe>)
    }
    fn renumbered_by_replay(&self) -> bool {
        Recipe::renumbered_by_replay(self)
    }
    fn renumber_name(&self, name: &str, n: &Numbers) -> String {
        Recipe::renumber_name(self, name, n)
    }
    fn renumber_data(&self, data: &str, n: &Numbers) -> Option<String> {
        Recipe::renumber_data(self, data, n)
    }
    fn renumber_token(&self, token: i64, n: &Numbers) -> i64 {
        Recipe::renumber_token(self, token, n)
    }
}

/// A user's recipe, its type erased (see the module's doc).
#[derive(Debug)]
pub struct Custom(Box<dyn DynRecipe>);

impl Custom {
    pub fn new<R: Recipe>(recipe: R) -> Self {
        Custom(Box::new(recipe))
    }

    /// The recipe inside, if it is an `R`.
    pub fn downcast_ref<R: Recipe>(&self) -> Option<&R> {
        self.0.as_any().downcast_ref::<R>()
    }
}

impl Clone for Custom {
    fn clone(&self) -> Self {
        Custom(self.0.clone_box())
    }
}

impl PartialEq for Custom {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_dyn(other.0.as_ref())
    }
}
impl Eq for Custom {}

impl Hash for Custom {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash_dyn(state);
    }
}

impl Recipe for Custom {
    fn name(&self) -> String {
        self.0.name()
    }
    fn handle(&mut self, ctx: &Ctx, input: Input, out: &mut Vec<Request>) {
        self.0.handle(ctx, input, out)
    }
    fn belief(&self) -> Belief {
        self.0.belief()
    }
    fn mode(&self) -> Mode {
        self.0.mode()
    }
    fn owned_node(&self) -> Option<&str> {
        self.0.owned_node()
    }
    fn owned_nodes(&self) -> Vec<&str> {
        self.0.owned_nodes()
    }
    fn waits_on_one_node(&self) -> bool {
        self.0.waits_on_one_node()
    }
    fn accepts_reentry(&self) -> bool {
        self.0.accepts_reentry()
    }
    fn can_abandon(&self) -> bool {
        self.0.can_abandon()
    }
    fn applies(&self, property: Property) -> bool {
        self.0.applies(property)
    }
    fn renamed(&self, r: &Renamer) -> Option<Self> {
        self.0.renamed_box(r).map(Custom)
    }
    fn rename_name(&self, name: &str, r: &Renaming) -> String {
        self.0.rename_name(name, r)
    }
    fn renumbered(&self, client: ClientId, r: &Renumber) -> Option<Self> {
        self.0.renumbered_box(client, r).map(Custom)
    }
    fn renumbered_by_replay(&self) -> bool {
        self.0.renumbered_by_replay()
    }
    fn renumber_name(&self, name: &str, n: &Numbers) -> String {
        self.0.renumber_name(name, n)
    }
    fn renumber_data(&self, data: &str, n: &Numbers) -> Option<String> {
        self.0.renumber_data(data, n)
    }
    fn renumber_token(&self, token: i64, n: &Numbers) -> i64 {
        self.0.renumber_token(token, n)
    }
}
