//! One component for every panel worth memoizing. yew compares a component's props before
//! rendering it, which is what keeps an unchanged panel from being drawn again; but each
//! component type also adds its own copy of yew's lifecycle code to the wasm module (about
//! 0.9 KB gzip each), and tests/e2e/first-load.test.mjs bounds the first load. So the panels
//! share one component type, [`MemoPanel`], whose props are a closed enum of the panels' own
//! props: every instance still compares only its own panel's props. The panels keep no state
//! of their own, so which instance draws which panel never matters.

use yew::prelude::*;

use super::editor_panel::{editor_panel, EditorPanelProps};
use super::faults::{fault_panel, FaultPanelProps};
use super::gallery::{gallery_panel, GalleryPanelProps};
use super::help::{help_dialog, HelpDialogProps};
use super::lesson::{lesson_panel, LessonPanelProps};
use super::object_tree::{object_tree, ObjectTreeProps};
use super::status::{status_panel, StatusPanelProps};
#[cfg(feature = "terminal")]
use super::terminal::{terminal_panel, TerminalPanelProps};
use super::timeline::{timeline_panel, TimelinePanelProps};

/// The inputs of one memoized panel.
#[derive(PartialEq)]
pub enum PanelInputs {
    ObjectTree(ObjectTreeProps),
    Editor(EditorPanelProps),
    Status(StatusPanelProps),
    Timeline(TimelinePanelProps),
    Faults(FaultPanelProps),
    Gallery(GalleryPanelProps),
    Lesson(LessonPanelProps),
    Help(HelpDialogProps),
    #[cfg(feature = "terminal")]
    Terminal(TerminalPanelProps),
}

#[derive(Properties, PartialEq)]
pub struct MemoPanelProps {
    pub panel: PanelInputs,
}

/// Draws one panel, again only when its inputs change.
pub struct MemoPanel;

impl Component for MemoPanel {
    type Message = ();
    type Properties = MemoPanelProps;

    fn create(_ctx: &Context<Self>) -> Self {
        MemoPanel
    }

    fn view(&self, ctx: &Context<Self>) -> Html {
        match &ctx.props().panel {
            PanelInputs::ObjectTree(p) => object_tree(p),
            PanelInputs::Editor(p) => editor_panel(p),
            PanelInputs::Status(p) => status_panel(p),
            PanelInputs::Timeline(p) => timeline_panel(p),
            PanelInputs::Faults(p) => fault_panel(p),
            PanelInputs::Gallery(p) => gallery_panel(p),
            PanelInputs::Lesson(p) => lesson_panel(p),
            PanelInputs::Help(p) => help_dialog(p),
            #[cfg(feature = "terminal")]
            PanelInputs::Terminal(p) => terminal_panel(p),
        }
    }
}

/// The panel as a [`MemoPanel`].
pub fn memo(panel: PanelInputs) -> Html {
    html! { <MemoPanel {panel} /> }
}
