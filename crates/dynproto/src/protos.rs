//! `.proto` files compiled at run time with protox (pure Rust, no protoc); Editions files
//! (`edition = "2023";`), which protox does not parse yet, are lowered to proto2 first
//! ([`crate::editions`]).

use crate::editions::{self, Lowered};
use crate::DynprotoError;
use callbench_primitives::error_text::one_line;
use miette::Diagnostic;
use prost_reflect::DescriptorPool;
use protox::file::{File, FileResolver, GoogleFileResolver, IncludeFileResolver};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Compiles `files` and everything they import. Imports are looked up in
/// `import_paths`; when none are given, in the current directory and then in
/// each file's own directory (so `x.proto` anywhere works alone). The
/// well-known `google/protobuf/*.proto` always resolve (protox carries them).
pub fn load_protos(files: &[PathBuf], import_paths: &[PathBuf]) -> Result<DescriptorPool, DynprotoError> {
    load(files, import_paths).map_err(DynprotoError::Descriptors)
}

fn load(files: &[PathBuf], import_paths: &[PathBuf]) -> Result<DescriptorPool, String> {
    if files.is_empty() {
        return Err("no .proto file given".to_string());
    }
    for dir in import_paths {
        if !dir.is_dir() {
            return Err(format!("import path {} is not a directory", dir.display()));
        }
    }
    let includes = match import_paths.is_empty() {
        true => default_includes(files),
        false => import_paths.to_vec(),
    };
    for file in files {
        // protox would say "not in any include path" for a file that does not exist at all.
        if !file.is_file() && !includes.iter().any(|dir| dir.join(file).is_file()) {
            return Err(format!("proto file {} not found (import paths: {})", file.display(), show(&includes)));
        }
    }
    // A parser bug must not take the CLI down with it: .proto files are user input.
    let compiled = std::panic::catch_unwind(|| {
        let lowered = Arc::new(Mutex::new(HashMap::new()));
        let mut compiler = protox::Compiler::with_file_resolver(Includes::new(&includes, lowered.clone()));
        compiler.include_imports(true);
        compiler.open_files(files)?;
        let lowered = lowered.lock().unwrap_or_else(|p| p.into_inner());
        if lowered.is_empty() {
            return Ok(compiler.descriptor_pool());
        }
        let mut set = compiler.file_descriptor_set();
        for file in &mut set.file {
            if let Some(l) = lowered.get(file.name()) {
                l.apply(file);
            }
        }
        Ok::<_, protox::Error>(DescriptorPool::from_file_descriptor_set(set)?)
    });
    match compiled {
        Ok(Ok(pool)) => Ok(pool),
        Ok(Err(e)) => Err(describe(&e, &includes)),
        Err(_) => Err(format!("cannot compile {} (the protox compiler failed)", show(files))),
    }
}

/// The include paths, then the well-known files, as `protox::Compiler::new` reads them; a file
/// protox cannot parse because it is an Editions file is lowered to proto2 and kept in `lowered`.
struct Includes {
    dirs: Vec<(PathBuf, IncludeFileResolver)>,
    google: GoogleFileResolver,
    lowered: Arc<Mutex<HashMap<String, Lowered>>>,
}

impl Includes {
    fn new(dirs: &[PathBuf], lowered: Arc<Mutex<HashMap<String, Lowered>>>) -> Includes {
        let dirs = dirs.iter().map(|d| (d.clone(), IncludeFileResolver::new(d.clone()))).collect();
        Includes { dirs, google: GoogleFileResolver::new(), lowered }
    }
}

impl FileResolver for Includes {
    fn resolve_path(&self, path: &Path) -> Option<String> {
        self.dirs.iter().find_map(|(_, r)| r.resolve_path(path))
    }

    fn open_file(&self, name: &str) -> Result<File, protox::Error> {
        for (dir, resolver) in &self.dirs {
            match resolver.open_file(name) {
                Err(e) if e.is_file_not_found() => continue,
                Err(e) => {
                    let Some(source) =
                        std::fs::read_to_string(dir.join(name)).ok().filter(|s| editions::declares_edition(s))
                    else {
                        return Err(e);
                    };
                    let lowered =
                        editions::lower(&source).map_err(|why| protox::Error::new(format!("{name}:{why}")))?;
                    let file = File::from_source(name, &lowered.source)?;
                    self.lowered.lock().unwrap_or_else(|p| p.into_inner()).insert(name.to_string(), lowered);
                    return Ok(file);
                }
                found => return found,
            }
        }
        // The transcoding annotations (`google/api/annotations.proto`, `http.proto`) are known without
        // -I, as the well-known types are, unless the user's import paths have their own.
        if let Some(source) = crate::google_api::embedded(name) {
            return File::from_source(name, source);
        }
        self.google.open_file(name)
    }
}

fn default_includes(files: &[PathBuf]) -> Vec<PathBuf> {
    let mut includes = vec![PathBuf::from(".")];
    for file in files {
        let dir = match file.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
            _ => continue,
        };
        if !includes.contains(&dir) {
            includes.push(dir);
        }
    }
    includes
}

/// One line: `file:line:column: message` when protox knows where, with a
/// hint for the error people hit most (a file outside every import path).
fn describe(err: &protox::Error, includes: &[PathBuf]) -> String {
    let message = err.to_string();
    let place = location(err).or_else(|| err.file().map(str::to_string));
    let mut line = match place {
        Some(place) if !message.contains(&place) => format!("{place}: {message}"),
        _ => message,
    };
    if line.contains("is not in any include path") {
        line.push_str(&format!(" (import paths: {})", show(includes)));
    }
    one_line(&line)
}

/// `name:line:column` of the first labelled span, if the error has source code.
fn location(err: &protox::Error) -> Option<String> {
    let label = err.labels()?.next()?;
    let source = err.source_code()?;
    let span = source.read_span(label.inner(), 0, 0).ok()?;
    let name = span.name().map(str::to_string).or_else(|| err.file().map(str::to_string))?;
    Some(format!("{name}:{}:{}", span.line() + 1, span.column() + 1))
}

fn show(dirs: &[PathBuf]) -> String {
    dirs.iter().map(|d| Path::display(d).to_string()).collect::<Vec<_>>().join(", ")
}
