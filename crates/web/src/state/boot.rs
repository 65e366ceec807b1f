//! Where a session starts from: the embed URL, `?scenario=<id>`, a share link, the saved
//! workspace, else a fresh one, each with a notice when something could not be read. The
//! platform reads the page (address and storage) into a [`StartingPage`]; the decisions are
//! here, natively testable.
//!
//! [`Booting`] builds the first model in pieces ([`super::replay`]): the page's decisions, the
//! base world, the replayed actions a few dozen engine events at a time, then the model around
//! them. The page runs one piece per browser task (`crate::platform::in_tasks`), so the main
//! thread is never held for the whole boot; [`Model::boot`] runs them all at once.

use std::cell::Cell;
use std::rc::Rc;

use converge_core::view::session::Starter;
use converge_core::view::share::ShareError;

use super::checkpoint::Offered;
use super::embed::{self, EmbedConfig};
use super::gallery::{self, GalleryTexts};
use super::lesson::Lessons;
use super::replay::{Piece, Replay, Replayed, PIECE_EVENTS};
use super::{Effect, Model, PageState, Workspace};
use crate::persist;

/// Reads one localStorage item by key.
pub type StorageReader<'a> = &'a dyn Fn(&str) -> Option<String>;

/// What the page holds when the app starts.
pub struct StartingPage<'a> {
    /// `location.search`, with its `?`.
    pub search: String,
    /// `location.hash`, with its `#`.
    pub hash: String,
    /// Reads one localStorage item; None when the browser offers no storage.
    pub storage: Option<StorageReader<'a>>,
    /// `gallery.json`, when web/boot.js fetched it before the app started (a visit whose
    /// address names a gallery scenario); else the texts come later (`Msg::GalleryLoaded`).
    pub gallery: Option<String>,
    /// The long session's checkpoint web/boot.js read from IndexedDB for this build (read only
    /// by the build with the `checkpoint` feature; [`super::checkpoint`]). [`Booting::start`]
    /// takes it, so its bytes are not held twice.
    pub checkpoint: Cell<Option<Offered>>,
    /// The checkpoint offered is the large starter's one the release ships
    /// (web/starter-checkpoint.mjs), not one this browser kept: it is not forgotten when it
    /// does not fit, and the notice says where the session came from.
    pub checkpoint_shipped: bool,
}

impl StartingPage<'_> {
    fn stored(&self, key: &str) -> Option<String> {
        self.storage.and_then(|read| read(key))
    }
}

impl Model {
    /// The session the page opens with, and the effects that set the page up (the theme): every
    /// piece of [`Booting`] at once.
    pub fn boot(page: &StartingPage<'_>) -> (Model, Vec<Effect>) {
        let mut booting = Box::new(Booting::start(page));
        loop {
            match booting.advance() {
                Boot::Pending(next) => booting = next,
                Boot::Ready(ready) => return (ready.model, ready.effects),
            }
        }
    }
}

/// The first model being built, one piece per [`Booting::advance`].
pub struct Booting {
    stage: Stage,
    page: Decided,
}

/// What the page decided before any world was built.
struct Decided {
    /// The lessons and fresh workspace to start over with if the replay fails its bound.
    fallback: (Workspace, Lessons),
    embed: Option<EmbedConfig>,
    embed_error: Option<String>,
    scenario_error: Option<String>,
    /// What reading the workspace said (a share link loaded, a save that could not be read).
    notice: Option<String>,
    url_scenario: Option<String>,
    gallery: GalleryTexts,
    /// A newcomer's first starter session in a browser with storage: the hint shows.
    first_edit_hint: bool,
    /// The page offered a checkpoint that did not fit or could not be read.
    forget_checkpoint: bool,
    /// The checkpoint offered is the one this build ships ([`StartingPage::checkpoint_shipped`]).
    #[cfg_attr(not(feature = "checkpoint"), allow(dead_code))]
    shipped: bool,
    /// The address asked for a fresh large starter (`?starter=large`): once it is open, the
    /// address drops the request, so a reload opens the saved session and loses no edit.
    fresh_large: bool,
    /// The step the session was read back at from the checkpoint.
    restored_at: Option<u64>,
}

enum Stage {
    /// A checkpoint that fits the workspace, read back in the next piece (else the workspace is
    /// replayed from the seed).
    #[cfg(feature = "checkpoint")]
    FromCheckpoint(Replay, Box<Offered>),
    Replaying(Replay),
    /// The saved workspace could not be replayed; replaying a fresh one instead.
    StartingOver(Replay),
    Assembling(Replayed),
}

/// What one piece of the boot left.
pub enum Boot {
    Pending(Box<Booting>),
    Ready(Box<Ready>),
}

/// The first model, and the effects that set the page up (the theme).
pub struct Ready {
    pub model: Model,
    pub effects: Vec<Effect>,
}

impl Booting {
    /// The page's decisions (embed mode, the scenario, which workspace), no world built yet.
    pub fn start(page: &StartingPage<'_>) -> Booting {
        let (embed, embed_error) = match embed::parse_query(&page.search) {
            Some(Ok(c)) => (Some(c), None),
            Some(Err(e)) => (None, Some(format!("The embed URL is not valid: {e}."))),
            None => (None, None),
        };
        let gallery = match &page.gallery {
            Some(json) => GalleryTexts::from_json(json).unwrap_or_default(),
            None => GalleryTexts::default(),
        };
        let (lessons, key, scenario_error) = initial_session(page, embed.as_ref(), &gallery);
        let opened = lessons.opened.is_some();
        let fresh_large = opens_fresh_large(page);
        let (mut workspace, notice) = initial_workspace(page, &key, opened);
        if let Some(t) = embed.as_ref().and_then(|c| c.theme) {
            workspace.theme = t;
        }
        let mut fresh = Workspace::default();
        if opened {
            fresh.actions.clear();
        }
        let first_edit_hint = embed.is_none()
            && lessons.id().is_none()
            && page.storage.is_some()
            && page.stored(persist::HINT_DONE_KEY).is_none();
        let url_scenario = lessons.id().map(str::to_owned);
        let fallback = (fresh, lessons.clone());
        let offered = page.checkpoint.take();
        let page_offered = offered.is_some();
        #[cfg(feature = "checkpoint")]
        let stored = offered.filter(|c| c.fits(&workspace, &lessons));
        #[cfg(not(feature = "checkpoint"))]
        let stored: Option<Offered> = None;
        // One that does not fit this session is of no use any more: the page forgets it (the
        // stored one; not for the shipped one, which leaves the stored one alone).
        let shipped = page.checkpoint_shipped;
        let forget_checkpoint = page_offered && stored.is_none() && !shipped;
        #[cfg(feature = "checkpoint")]
        let first = |replay| match stored {
            Some(c) => Stage::FromCheckpoint(replay, Box::new(c)),
            None => Stage::Replaying(replay),
        };
        #[cfg(not(feature = "checkpoint"))]
        let first = Stage::Replaying;
        let (stage, notice) = match Replay::untrusted(workspace, lessons) {
            Ok(replay) => (first(replay), notice),
            Err(e) => start_over(&fallback, &e),
        };
        Booting {
            stage,
            page: Decided {
                fallback,
                embed,
                embed_error,
                scenario_error,
                notice,
                url_scenario,
                gallery,
                first_edit_hint,
                forget_checkpoint,
                shipped,
                fresh_large,
                restored_at: None,
            },
        }
    }

    /// One piece of the boot.
    pub fn advance(self: Box<Self>) -> Boot {
        let Booting { stage, mut page } = *self;
        let stage = match stage {
            #[cfg(feature = "checkpoint")]
            Stage::FromCheckpoint(replay, stored) => {
                match stored.world() {
                    Some(world) => {
                        let from = if page.shipped {
                            "Opened the large starter from the checkpoint this version ships"
                        } else {
                            "Reloaded from this browser's checkpoint of the session"
                        };
                        page.notice = page.notice.or_else(|| {
                            Some(format!(
                                "{from} at step {}; the timeline and step-back start there.",
                                stored.steps
                            ))
                        });
                        page.restored_at = Some(stored.steps);
                        Stage::Replaying(replay.resume(world, stored.cut, stored.events))
                    }
                    // Another build's, or damaged: the replay from the seed it stands in for.
                    _ => {
                        page.forget_checkpoint = !page.shipped;
                        Stage::Replaying(replay)
                    }
                }
            }
            Stage::Replaying(replay) => match replay.advance(PIECE_EVENTS) {
                Ok(Piece::Pending(replay)) => Stage::Replaying(replay),
                Ok(Piece::Replayed(done)) => Stage::Assembling(done),
                Err(e) => {
                    let (stage, notice) = start_over(&page.fallback, &e);
                    page.notice = notice;
                    stage
                }
            },
            Stage::StartingOver(replay) => match replay.advance(PIECE_EVENTS) {
                Ok(Piece::Pending(replay)) => Stage::StartingOver(replay),
                Ok(Piece::Replayed(done)) => Stage::Assembling(done),
                Err(e) => unreachable!("a replay without an event bound cannot exceed it: {e}"),
            },
            Stage::Assembling(done) => return page.ready(done.finish()),
        };
        Boot::Pending(Box::new(Booting { stage, page }))
    }
}

impl Decided {
    fn ready(self, mut model: Model) -> Boot {
        model.notice = self.embed_error.or(self.scenario_error).or(self.notice);
        model.first_edit_hint = self.first_edit_hint;
        model.restored_at = self.restored_at;
        model.page = PageState {
            embed: self.embed,
            url_scenario: self.url_scenario,
            gallery: self.gallery,
            ..PageState::default()
        };
        let mut effects = vec![Effect::ApplyTheme(model.theme)];
        if self.forget_checkpoint {
            effects.push(Effect::ForgetCheckpoint);
        }
        if self.fresh_large && model.page.embed.is_none() && model.page.url_scenario.is_none() {
            effects.push(Effect::ShowScenarioInUrl { scenario: None });
        }
        Boot::Ready(Box::new(Ready { model, effects }))
    }
}

/// The saved session cannot be replayed: replay a fresh one, with a notice saying why.
fn start_over(fallback: &(Workspace, Lessons), e: &ShareError) -> (Stage, Option<String>) {
    let (fresh, lessons) = fallback.clone();
    (
        Stage::StartingOver(Replay::trusted(fresh, lessons)),
        Some(format!(
            "The saved session could not be replayed ({e}); started a fresh one."
        )),
    )
}

/// The scenario a session opens from the URL (`?scenario=<gallery id>`, or `custom` for the
/// last file the reader opened), its lesson, the localStorage key the session owns, and a
/// notice when the scenario could not be opened.
fn initial_session(
    page: &StartingPage<'_>,
    embed: Option<&EmbedConfig>,
    gallery: &GalleryTexts,
) -> (Lessons, String, Option<String>) {
    let id = match embed {
        Some(c) => c.scenario.clone(),
        None => embed::params(&page.search)
            .into_iter()
            .find(|(k, _)| k == "scenario")
            .map(|(_, v)| v),
    };
    let key = |id: Option<&str>| match (embed, id) {
        (Some(c), id) => c.storage_key(id),
        (None, Some(id)) => persist::scenario_storage_key(id),
        (None, None) => persist::STORAGE_KEY.to_owned(),
    };
    let Some(id) = id.filter(|i| !i.is_empty()) else {
        return (Lessons::default(), key(None), None);
    };
    let opened = if id == gallery::CUSTOM_ID {
        page.stored(persist::CUSTOM_TEXT_KEY)
            .ok_or_else(|| "no scenario file was opened in this browser".to_owned())
            .and_then(|t| gallery::open_text(&t))
    } else {
        gallery::open_in(gallery, &id)
    };
    match opened {
        Ok(o) => {
            let step = embed.map_or(0, |c| c.step);
            (Lessons::with(Rc::new(o), step), key(Some(&id)), None)
        }
        Err(e) => (
            Lessons::default(),
            key(None),
            Some(format!(
                "The scenario {id:?} could not be opened ({e}); showing the starter cluster."
            )),
        ),
    }
}

/// Whether the address asks for a fresh large starter (`?starter=large`, which web/boot.js
/// tests the same way), whatever is saved.
fn opens_fresh_large(page: &StartingPage<'_>) -> bool {
    page.search.contains("starter=large")
}

/// The workspace to start from: a share link, else localStorage (under `key`), else a fresh
/// one; with a notice when something could not be read.
fn initial_workspace(
    page: &StartingPage<'_>,
    key: &str,
    opened: bool,
) -> (Workspace, Option<String>) {
    let fresh = || {
        if opened {
            Workspace {
                actions: Vec::new(),
                ..Workspace::default()
            }
        } else {
            Workspace::default()
        }
    };
    if opens_fresh_large(page) {
        return (Workspace::fresh(Starter::Large), None);
    }
    if persist::is_share_link(&page.hash) {
        return match persist::from_hash(&page.hash) {
            Ok(w) => (w, Some("Loaded the shared workspace from the link.".into())),
            Err(e) => (
                fresh(),
                Some(format!(
                    "The share link could not be opened ({e}); started fresh."
                )),
            ),
        };
    }
    match page.stored(key) {
        None => (fresh(), None),
        Some(text) => match persist::from_json(&text) {
            Ok(w) => (w, None),
            Err(e) => (
                fresh(),
                Some(format!(
                    "Your saved workspace could not be restored ({e}); started a fresh one."
                )),
            ),
        },
    }
}

#[cfg(test)]
pub(super) mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// Boots the starter's session saved as `text`, piece by piece, with `checkpoint` as read
    /// from IndexedDB.
    #[cfg(feature = "checkpoint")]
    pub fn boot_with(
        text: &str,
        checkpoint: Option<crate::state::checkpoint::Stored>,
    ) -> (Model, Vec<Effect>) {
        let read = |k: &str| (k == persist::STORAGE_KEY).then(|| text.to_owned());
        let mut booting = Box::new(Booting::start(&StartingPage {
            search: String::new(),
            hash: String::new(),
            storage: Some(&read),
            gallery: None,
            checkpoint: Cell::new(checkpoint.map(crate::state::checkpoint::Stored::offered)),
            checkpoint_shipped: false,
        }));
        loop {
            match booting.advance() {
                Boot::Pending(next) => booting = next,
                Boot::Ready(ready) => return (ready.model, ready.effects),
            }
        }
    }

    fn boot(search: &str, hash: &str, stored: &[(&str, &str)]) -> (Model, Vec<Effect>) {
        let items: BTreeMap<String, String> = stored
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let read = |k: &str| items.get(k).cloned();
        Model::boot(&StartingPage {
            search: search.into(),
            hash: hash.into(),
            storage: Some(&read),
            gallery: None,
            checkpoint: Cell::default(),
            checkpoint_shipped: false,
        })
    }

    #[test]
    fn a_first_visit_starts_the_starter_with_the_hint_and_applies_the_theme() {
        let (m, effects) = boot("", "", &[]);
        assert!(m.first_edit_hint);
        assert_eq!(m.notice, None);
        assert_eq!(m.lessons.id(), None);
        assert_eq!(effects, vec![Effect::ApplyTheme(m.theme)]);
    }

    #[test]
    fn a_scenario_in_the_url_opens_it_and_its_storage_key() {
        let (m, _) = boot("?scenario=scale-up", "", &[]);
        assert_eq!(m.lessons.id(), Some("scale-up"));
        assert_eq!(m.page.url_scenario.as_deref(), Some("scale-up"));
        assert_eq!(m.storage_key(), "converge.workspace.scenario.scale-up");
        assert!(!m.first_edit_hint);
    }

    #[test]
    fn unreadable_inputs_fall_back_with_a_notice() {
        let (m, _) = boot("?scenario=nope", "", &[]);
        assert_eq!(m.lessons.id(), None);
        assert!(m
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("The scenario \"nope\" could not be opened")));
        let (m, _) = boot("", "", &[("converge.workspace", "{")]);
        assert!(m
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("Your saved workspace could not be restored")));
        let (m, _) = boot("?embed&theme=pink", "", &[]);
        assert!(m.page.embed.is_none());
        assert!(m
            .notice
            .as_deref()
            .is_some_and(|n| n.starts_with("The embed URL is not valid")));
    }

    /// Runs the boot piece by piece: the model and how many pieces it took.
    fn boot_in_pieces(search: &str, stored: &[(&str, &str)]) -> (Model, usize) {
        let items: BTreeMap<String, String> = stored
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let read = |k: &str| items.get(k).cloned();
        let mut booting = Box::new(Booting::start(&StartingPage {
            search: search.into(),
            hash: String::new(),
            storage: Some(&read),
            gallery: None,
            checkpoint: Cell::default(),
            checkpoint_shipped: false,
        }));
        let mut pieces = 0;
        loop {
            pieces += 1;
            match booting.advance() {
                Boot::Pending(next) => booting = next,
                Boot::Ready(ready) => return (ready.model, pieces),
            }
        }
    }

    #[test]
    fn the_starter_boots_in_pieces_the_base_world_the_actions_then_the_model() {
        let (m, pieces) = boot_in_pieces("", &[]);
        // The base world; the Deployment's create (a few events) and the run until converged;
        // the model.
        assert_eq!(pieces, 3);
        let (whole, _) = boot("", "", &[]);
        assert_eq!(m.world.steps(), whole.world.steps());
        assert_eq!(m.editor_text, whole.editor_text);
        assert_eq!(m.rows, whole.rows);
        assert!(m.first_edit_hint);
    }

    #[test]
    fn a_save_past_the_event_bound_starts_over_in_pieces_with_a_notice() {
        let mut saved = Workspace::default();
        saved.actions.extend((0..80).map(|_| {
            converge_core::view::session::SessionAction::apply(
                converge_core::engine::Input::Advance { ms: 86_400_000 },
            )
        }));
        let text = persist::to_json(&saved);
        let (m, _) = boot_in_pieces("", &[(persist::STORAGE_KEY, &text)]);
        let (whole, _) = boot("", "", &[(persist::STORAGE_KEY, &text)]);
        assert_eq!(m.notice, whole.notice);
        assert_eq!(m.world.steps(), whole.world.steps());
    }

    #[test]
    fn a_fresh_large_starter_leaves_the_address_so_a_reload_keeps_its_edits() {
        let (mut m, effects) = boot("?starter=large", "", &[]);
        assert_eq!(m.workspace().starter, Starter::Large);
        assert!(effects.contains(&Effect::ShowScenarioInUrl { scenario: None }));
        // A person's step saves the session; the reload, at the address without the request,
        // opens it, not another fresh starter.
        m.update(super::super::Msg::Step);
        let saved = persist::to_json(&m.workspace());
        let (reloaded, effects) = boot("", "", &[(persist::STORAGE_KEY, saved.as_str())]);
        assert_eq!(reloaded.workspace(), m.workspace());
        assert_eq!(reloaded.world.steps(), m.world.steps());
        assert!(!effects
            .iter()
            .any(|e| matches!(e, Effect::ShowScenarioInUrl { .. })));
    }

    #[test]
    fn without_storage_the_hint_is_not_shown() {
        let (m, _) = Model::boot(&StartingPage {
            search: String::new(),
            hash: String::new(),
            storage: None,
            gallery: None,
            checkpoint: Cell::default(),
            checkpoint_shipped: false,
        });
        assert!(!m.first_edit_hint);
    }
}
