//! Opening scenarios in the playground: the gallery (core's `scenario::gallery`, the same files
//! `converge check` runs) and files the reader opens or pastes. No DOM here; the views are in
//! `crate::components::gallery`.
//!
//! The browser's module does not carry the gallery's texts (about 13 KB brotli of the first
//! load): `./dev build` writes them to `gallery.json` (web/gallery-bundle.mjs), which the page
//! fetches after `converge-ready`, or before it when the address names a gallery scenario
//! (web/boot.js). Native builds (the tests) use core's compiled-in copies.

use std::collections::BTreeMap;
use std::rc::Rc;

use converge_core::engine::World;
use converge_core::scenario::gallery::GALLERY_IDS;
use converge_core::scenario::{LessonGuide, Scenario};

/// The gallery's texts by id, once they are there.
#[derive(Clone, Debug, PartialEq)]
pub struct GalleryTexts(Option<Rc<BTreeMap<String, String>>>);

impl Default for GalleryTexts {
    /// Native builds have the texts compiled in; the browser's module fetches them.
    fn default() -> Self {
        #[cfg(not(target_arch = "wasm32"))]
        {
            GalleryTexts::compiled()
        }
        #[cfg(target_arch = "wasm32")]
        {
            GalleryTexts::not_loaded()
        }
    }
}

impl GalleryTexts {
    /// Not fetched yet.
    pub fn not_loaded() -> Self {
        GalleryTexts(None)
    }

    /// Core's compiled-in copies (native builds).
    #[cfg(not(target_arch = "wasm32"))]
    pub fn compiled() -> Self {
        let texts = converge_core::scenario::gallery::GALLERY
            .iter()
            .map(|e| (e.id.to_owned(), e.text.to_owned()))
            .collect();
        GalleryTexts(Some(Rc::new(texts)))
    }

    /// `gallery.json`: an object of id to file text, holding every gallery id.
    pub fn from_json(json: &str) -> Result<Self, String> {
        let texts: BTreeMap<String, String> =
            serde_json::from_str(json).map_err(|e| format!("gallery.json: {e}"))?;
        if let Some(id) = GALLERY_IDS.iter().find(|id| !texts.contains_key(**id)) {
            return Err(format!(
                "gallery.json has no {id:?}: it is not this build's"
            ));
        }
        Ok(GalleryTexts(Some(Rc::new(texts))))
    }

    pub fn loaded(&self) -> bool {
        self.0.is_some()
    }

    fn text(&self, id: &str) -> Option<&str> {
        self.0.as_ref()?.get(id).map(String::as_str)
    }
}

/// The id of a scenario the reader opened from a file or pasted (not in the gallery).
pub const CUSTOM_ID: &str = "custom";

/// A scenario open in the playground: the session replays its actions on `base`.
#[derive(Clone, Debug)]
pub struct Opened {
    /// The gallery id, or [`CUSTOM_ID`].
    pub id: String,
    /// The file's text (kept so a custom scenario survives a reload).
    pub text: String,
    pub scenario: Scenario,
    /// The world at t=0 with the scenario's faults and actions scheduled.
    pub base: World,
    pub guide: Option<LessonGuide>,
}

impl PartialEq for Opened {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.text == other.text
    }
}

/// Opens a gallery scenario by id (its text from `texts`).
pub fn open_in(texts: &GalleryTexts, id: &str) -> Result<Opened, String> {
    if !GALLERY_IDS.contains(&id) {
        return Err(format!(
            "there is no gallery scenario {id:?}; the gallery has {}",
            GALLERY_IDS.join(", ")
        ));
    }
    let text = texts
        .text(id)
        .ok_or_else(|| "the gallery's files have not been loaded".to_owned())?;
    build(id, text)
}

/// Opens a gallery scenario from core's compiled-in copies (native builds: tests).
#[cfg(not(target_arch = "wasm32"))]
pub fn open(id: &str) -> Result<Opened, String> {
    open_in(&GalleryTexts::compiled(), id)
}

/// Opens a scenario file's text (JSON or YAML); errors carry the line and the field.
pub fn open_text(text: &str) -> Result<Opened, String> {
    build(CUSTOM_ID, text)
}

fn build(id: &str, text: &str) -> Result<Opened, String> {
    let scenario = Scenario::load(text).map_err(|e| e.to_string())?;
    let base = scenario.playground_world(None).map_err(|e| e.to_string())?;
    let guide = LessonGuide::for_scenario(&scenario).map_err(|e| e.to_string())?;
    Ok(Opened {
        id: id.to_owned(),
        text: text.to_owned(),
        scenario,
        base,
        guide,
    })
}

/// One gallery card.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Card {
    pub number: usize,
    pub id: &'static str,
    pub title: String,
    pub summary: String,
}

/// The gallery's cards, in teaching order (entries that fail to load are left out; core's
/// tests make sure none does); none before the texts are loaded.
pub fn cards(texts: &GalleryTexts) -> Vec<Card> {
    GALLERY_IDS
        .iter()
        .enumerate()
        .filter_map(|(i, &id)| {
            let s = Scenario::load(texts.text(id)?).ok()?;
            let (title, summary) = match &s.lesson {
                Some(l) => (l.title.clone(), l.summary.trim().to_owned()),
                None => (s.name.clone(), s.description.trim().to_owned()),
            };
            Some(Card {
                number: i + 1,
                id,
                title,
                summary,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gallery_shows_fourteen_cards_with_lesson_titles() {
        assert!(cards(&GalleryTexts::not_loaded()).is_empty());
        let cards = cards(&GalleryTexts::compiled());
        assert_eq!(cards.len(), 14);
        assert_eq!(cards[0].title, "Spec vs status");
        assert_eq!(cards[9].title, "Optimistic concurrency");
        assert_eq!(cards[10].title, "A Job that gives up");
        assert_eq!(cards[11].title, "One Pod per node");
        assert_eq!(cards[12].title, "A partitioned rollout");
        assert_eq!(cards[13].title, "Readiness takes a Pod out of its Service");
        assert!(cards.iter().all(|c| !c.summary.is_empty()));
    }

    #[test]
    fn an_unknown_gallery_id_names_the_ones_that_exist() {
        let e = open("nope").err().unwrap_or_default();
        assert!(
            e.starts_with("there is no gallery scenario \"nope\""),
            "{e}"
        );
        assert!(e.contains("scale-up"), "{e}");
    }

    #[test]
    fn a_pasted_file_with_a_typo_is_refused_with_its_line() {
        let e = open_text("apiVersion: converge.dev/v1\nkind: Scenario\nname: x\nseeed: 3\n")
            .err()
            .unwrap_or_default();
        assert!(
            e.starts_with("line 4, column 1: unknown field `seeed`"),
            "{e}"
        );
    }
}
