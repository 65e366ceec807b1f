//! The views, one module per panel, each drawn from a props struct built from the model. The
//! panels that are large or change at other times than the rest (object tree, editor, status,
//! timeline, faults) are components over `PartialEq` props: yew compares the props
//! before rendering, so a panel whose props did not change is not rendered again (typing in
//! the editor redraws neither the tree nor the timeline). The small chrome (header, notices,
//! toolbar, help, gallery, lesson) is plain view functions. Views format and turn their own DOM events
//! into `crate::state::Msg`; they decide nothing and perform no effect.
//!
//! Why components are written with [`panel_component!`] rather than `#[function_component]`:
//! the first function component brings yew's hook runtime into the wasm module, and every
//! component its own copy of yew's lifecycle code; tests/e2e/first-load.test.mjs bounds the
//! first load, and these panels need no hook. A panel is still a pure function of its props.

/// Declares `$name`, a component that draws `$view(&props)` and keeps no state of its own.
macro_rules! panel_component {
    ($name:ident, $props:ty, $view:ident) => {
        #[doc = concat!("The panel drawn by `", stringify!($view), "`; rendered again only when its props change.")]
        pub struct $name;

        impl yew::Component for $name {
            type Message = ();
            type Properties = $props;

            fn create(_ctx: &yew::Context<Self>) -> Self {
                $name
            }

            fn view(&self, ctx: &yew::Context<Self>) -> yew::Html {
                $view(ctx.props())
            }
        }
    };
}
use panel_component;

pub mod editor;
pub mod editor_panel;
pub mod faults;
pub mod gallery;
pub mod help;
pub mod lesson;
pub mod notices;
pub mod object_tree;
pub mod status;
pub mod timeline;
pub mod toolbar;
pub mod topbar;
mod tree_keys;

pub use editor::CodeEditor;
pub use editor_panel::EditorPanel;
pub use faults::FaultPanel;
pub use gallery::{gallery_panel, GalleryPanelProps};
pub use help::{help_dialog, HelpDialogProps};
pub use lesson::{lesson_panel, LessonPanelProps};
pub use notices::{notice_bar, NoticeBarProps};
pub use object_tree::ObjectTree;
pub use status::StatusPanel;
pub use timeline::TimelinePanel;
pub use toolbar::{simulation_toolbar, SimulationToolbarProps};
pub use topbar::{topbar, TopbarProps};
