//! The loader's `Needs` through the library API: a collectives-only load
//! keeps less, but the collective analysis reads the same kernels from it
//! as from a full load.

mod common;

use std::path::Path;

use tracelens::analysis::commands::collectives::{
    CollectiveOptions, analyze, collective_kernel_count,
};
use tracelens::load::load;
use tracelens::trace::Needs;

fn same_analysis(paths: &[&Path]) {
    let full: Vec<_> = paths
        .iter()
        .map(|p| load(p, &Needs::ALL).unwrap())
        .collect();
    let lean: Vec<_> = paths
        .iter()
        .map(|p| load(p, &Needs::collectives_only()).unwrap())
        .collect();
    for (f, l) in full.iter().zip(&lean) {
        assert!(l.len() <= f.len());
        assert_eq!(
            l.len(),
            collective_kernel_count(l),
            "only collective kernels"
        );
        assert_eq!(collective_kernel_count(f), collective_kernel_count(l));
        assert_eq!(f.info().rank, l.info().rank);
        assert_eq!(f.info().device_count, l.info().device_count);
    }
    let opts = CollectiveOptions {
        world_size: paths.len(),
        ..CollectiveOptions::default()
    };
    let a = analyze(&full, &opts).unwrap();
    let b = analyze(&lean, &opts).unwrap();
    assert_eq!(a.sheets, b.sheets);
    assert_eq!(a.kernels, b.kernels);
}

#[test]
fn collectives_only_load_gives_the_same_collectives() {
    let dir = Path::new("testdata");
    same_analysis(&[&dir.join("example.json")]);
}

#[test]
#[cfg_attr(no_shared_corpus, ignore = "needs ../shared/corpus")]
fn collectives_only_load_gives_the_same_collectives_on_dlrm() {
    let corpus = common::shared().join("corpus/multirank/dlrm_v100_8rank");
    let mut files: Vec<_> = std::fs::read_dir(corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    let refs: Vec<&Path> = files.iter().map(|p| p.as_path()).collect();
    same_analysis(&refs);
}
