//! Trunk's entry point: mounts the playground.

fn main() {
    converge_web::start();
}
