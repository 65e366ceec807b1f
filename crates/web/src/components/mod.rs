//! The views, one module per panel, each a function of a props struct built from the model.
//! The panels (object tree, editor, status, timeline, faults, gallery, lesson, help) are drawn
//! through [`MemoPanel`], a component over `PartialEq` props: yew compares the props before
//! rendering, so a panel whose props did not change is not rendered again (typing in the
//! editor redraws neither the tree nor the timeline). The small chrome that changes with
//! nearly every update anyway (header, notices, toolbar) is drawn directly. Views
//! format and turn their own DOM events into `crate::state::Msg`; they decide nothing and
//! perform no effect.

pub mod chart;
pub mod editor;
pub mod editor_panel;
pub mod faults;
pub mod gallery;
pub mod help;
pub mod lesson;
mod memo;
pub mod notices;
pub mod object_tree;
pub mod status;
#[cfg(feature = "terminal")]
pub mod terminal;
pub mod timeline;
pub mod toolbar;
pub mod topbar;
mod tree_keys;
pub mod why;

pub use editor::CodeEditor;
pub use editor_panel::EditorPanelProps;
pub use faults::FaultPanelProps;
pub use gallery::GalleryPanelProps;
pub use help::HelpDialogProps;
pub use lesson::LessonPanelProps;
pub use memo::{memo, MemoPanel, MemoPanelProps, PanelInputs};
pub use notices::{notice_bar, NoticeBarProps};
pub use object_tree::ObjectTreeProps;
pub use status::StatusPanelProps;
#[cfg(feature = "terminal")]
pub use terminal::TerminalPanelProps;
pub use timeline::TimelinePanelProps;
pub use toolbar::{simulation_toolbar, SimulationToolbarProps};
pub use topbar::{topbar, TopbarProps};
