//! Fetching each machine's Debian kernel, through the private apt of [`crate::debs`] (the
//! machine's own apt setup is left alone, and no host name is written anywhere).
//!
//! A machine's suites are tried in its order of preference: a kernel its index does not
//! name, or whose download fails (a mirror may list files it does not serve yet), passes
//! to the next suite, and the report says why. A package that downloads but holds no
//! kernel is a failure, never a reason to try another suite.
//!
//! Only the kernel image is kept (`<cache>/<machine>/kernel`, with its `config`, `release`,
//! `package` and `suite` beside it); once every chosen machine has one, nothing is fetched.

use std::fs;
use std::path::Path;

use super::kernel::{exports_getrandom, Kernel, Unbootable};
use super::machines::Machine;
use super::source;
use super::unpack::{self, CONFIG, KERNEL, RELEASE};
use crate::apt;
use crate::debs::PrivateApt;

/// The file that records the suite (first line) and the suites passed over (the others).
const SUITE: &str = "suite";
const PACKAGE: &str = "package";

/// The kernel already in the cache for `m`.
pub fn cached(cache: &Path, m: &Machine) -> Option<Kernel> {
    if let Some(config) = m.source_config {
        return source::cached(m, config);
    }
    let dir = cache.join(m.name);
    let image = dir.join(KERNEL);
    let read = |f: &str| {
        fs::read_to_string(dir.join(f))
            .ok()
            .map(|s| s.trim().to_string())
    };
    (image.is_file()).then_some(())?;
    // A cache written before suites were recorded: a machine of one suite says which.
    let suite = read(SUITE).or_else(|| match m.suites {
        [one] => Some(one.name(&apt::codename()?)),
        _ => None,
    })?;
    let mut suite = suite.lines().map(str::to_string);
    Some(Kernel {
        image,
        release: read(RELEASE)?,
        package: read(PACKAGE)?,
        getrandom: exports_getrandom(&read(CONFIG)?),
        suite: suite.next()?,
        passed_over: suite.collect(),
        unbuilt: None,
    })
}

/// One place a machine's kernel may come from: the machine and a suite name.
type Candidate<'a> = (&'a Machine, String);

/// The kernel of every machine in `machines`, from the cache or fetched into it.
pub fn kernels(cache: &Path, machines: &[Machine], log: &Path) -> Vec<Result<Kernel, Unbootable>> {
    let missing: Vec<&Machine> = machines
        .iter()
        .filter(|m| cached(cache, m).is_none())
        .collect();
    if missing.is_empty() {
        return machines
            .iter()
            .map(|m| cached(cache, m).ok_or(Unbootable::Unavailable("not in the cache".into())))
            .collect();
    }
    let codename = apt::codename().ok_or("no VERSION_CODENAME in /etc/os-release".to_string());
    let candidates: Vec<Candidate> = match &codename {
        Ok(codename) => missing
            .iter()
            .flat_map(|m| m.suites.iter().map(|s| (*m, s.name(codename))))
            .collect(),
        Err(_) => Vec::new(),
    };
    let setup = codename.and_then(|codename| {
        let mut suites: Vec<(String, Vec<&str>)> = Vec::new();
        for (m, name) in &candidates {
            match suites.iter_mut().find(|(s, _)| s == name) {
                Some((_, arches)) if !arches.contains(&m.deb_arch) => arches.push(m.deb_arch),
                Some(_) => {}
                None => suites.push((name.clone(), vec![m.deb_arch])),
            }
        }
        let apt = PrivateApt::create(&cache.join("apt"), &suites, &codename, log)?;
        println!("kernels: apt-get update (private lists: {})", apt.arches);
        apt.update();
        Ok(apt)
    });
    // Debian's images and, for the machines that build their kernel, its source.
    let (built, images): (Vec<Candidate>, Vec<Candidate>) = candidates
        .into_iter()
        .partition(|(m, _)| m.source_config.is_some());
    let resolved = match &setup {
        Ok(apt) => [source::resolve(apt, &built), resolve(apt, &images)].concat(),
        Err(_) => Vec::new(),
    };
    let candidates = [built, images].concat();
    machines
        .iter()
        .map(|m| {
            if let Some(k) = cached(cache, m) {
                return Ok(k);
            }
            let apt = setup
                .as_ref()
                .map_err(|e| Unbootable::Unavailable(e.clone()))?;
            let tries = candidates
                .iter()
                .zip(&resolved)
                .filter(|((c, _), _)| c.name == m.name)
                .map(|((_, suite), packages)| (suite.as_str(), packages.clone()));
            let dir = cache.join(m.name);
            first_served(m.name, log, tries, |suite, packages, passed_over| {
                match m.source_config {
                    Some(config) => {
                        source::fetch(apt, &dir, m, config, (suite, packages), passed_over)
                    }
                    None => fetch(apt, &dir, m, suite, packages, passed_over),
                }
            })
        })
        .collect()
}

/// Tries each (suite, packages resolved there) in order: the first kernel `fetch` gives,
/// with the reasons the suites before it were passed over. A suite is passed over when
/// its index names no kernel or `fetch` says Unavailable; a Failed ends the search.
fn first_served<'a>(
    machine: &str,
    log: &Path,
    tries: impl Iterator<Item = (&'a str, Result<Vec<String>, String>)>,
    mut fetch: impl FnMut(&str, &[String], &[String]) -> Result<Kernel, Unbootable>,
) -> Result<Kernel, Unbootable> {
    let mut passed_over: Vec<String> = Vec::new();
    for (suite, packages) in tries {
        let why = match packages {
            Ok(packages) => match fetch(suite, &packages, &passed_over) {
                Ok(kernel) => return Ok(kernel),
                Err(Unbootable::Unavailable(why)) => why,
                Err(failed) => return Err(failed),
            },
            Err(why) => why,
        };
        println!(
            "kernels: {machine}: not from {suite}: {why} (apt's output: {})",
            log.display()
        );
        passed_over.push(format!("{suite}: {why}"));
    }
    Err(Unbootable::Unavailable(if passed_over.is_empty() {
        "no suite to fetch it from".to_string()
    } else {
        passed_over.join("; ")
    }))
}

/// The packages that hold each candidate's kernel image and configuration, looked up for
/// all candidates at once (see [`PrivateApt::dependencies`]). Debian's 7.x packages split
/// the kernel: `linux-image-<ver>` then depends on `linux-binary-<ver>` (the image at
/// `usr/lib/modules/<ver>/vmlinuz`) and `linux-base-<ver>` (its `config`), and holds
/// nothing itself (the mirror may not even serve it); before, `linux-image-<ver>` held
/// `boot/vmlinuz-<ver>` and `boot/config-<ver>`.
fn resolve(apt: &PrivateApt, candidates: &[Candidate]) -> Vec<Result<Vec<String>, String>> {
    let qualified = |(m, suite): &Candidate, p: &str| {
        if p.contains(':') {
            format!("{p}/{suite}")
        } else {
            format!("{p}:{}/{suite}", m.deb_arch)
        }
    };
    let metas: Vec<String> = candidates
        .iter()
        .map(|c| qualified(c, &format!("{}:{}", c.0.kernel_package, c.0.deb_arch)))
        .collect();
    let images: Vec<Result<String, String>> = apt
        .dependencies(&metas)
        .into_iter()
        .zip(&metas)
        .map(|(deps, meta)| {
            deps.into_iter()
                .find(|d| d.starts_with("linux-image-"))
                .ok_or_else(|| format!("its index names no linux-image-* for {meta}"))
        })
        .collect();
    let asked: Vec<String> = candidates
        .iter()
        .zip(&images)
        .filter_map(|(c, i)| Some(qualified(c, i.as_ref().ok()?)))
        .collect();
    let mut parts = apt.dependencies(&asked).into_iter();
    images
        .into_iter()
        .zip(candidates)
        .map(|(image, c)| {
            let image = image?;
            let deps = parts.next().unwrap_or_default();
            let split: Vec<String> = ["linux-binary-", "linux-base-"]
                .iter()
                .filter_map(|prefix| deps.iter().find(|d| d.starts_with(prefix)).cloned())
                .map(|p| qualified(c, &p))
                .collect();
            Ok(if split.len() == 2 {
                split
            } else {
                vec![qualified(c, &image)]
            })
        })
        .collect()
}

/// Downloads `packages` from `suite` and keeps the kernel image and configuration they
/// hold. A download that fails makes the suite Unavailable; a package without the kernel
/// is Failed.
fn fetch(
    apt: &PrivateApt,
    dir: &Path,
    m: &Machine,
    suite: &str,
    packages: &[String],
    passed_over: &[String],
) -> Result<Kernel, Unbootable> {
    let failed = Unbootable::Failed;
    let _ = fs::remove_dir_all(dir);
    let mut debs = Vec::new();
    for package in packages {
        println!("kernels: {}: apt-get download {package}", m.name);
        let deb = apt
            .download(package, dir)
            .map_err(|e| Unbootable::Unavailable(format!("{}: {}", e.package, e.reason)))?;
        unpack::extract(&deb, dir).map_err(failed)?;
        debs.push(
            deb.file_name()
                .map_or(package.to_string(), |n| n.to_string_lossy().into_owned()),
        );
        fs::remove_file(&deb).map_err(|e| failed(format!("{}: {e}", deb.display())))?;
    }
    for file in [KERNEL, CONFIG, RELEASE] {
        if !dir.join(file).is_file() {
            return Err(failed(format!("no {file} found in {}", debs.join(", "))));
        }
    }
    let write = |name: &str, text: String| {
        fs::write(dir.join(name), text).map_err(|e| failed(format!("{}: {e}", dir.display())))
    };
    write(PACKAGE, debs.join(" + "))?;
    write(
        SUITE,
        [&[suite.to_string()], passed_over].concat().join("\n"),
    )?;
    cached(dir.parent().unwrap_or(dir), m)
        .ok_or_else(|| failed(format!("{}: no kernel kept", dir.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn kernel(suite: &str, passed_over: &[String]) -> Kernel {
        Kernel {
            image: PathBuf::from("/k"),
            release: "7.2.13+deb14-s390x".into(),
            package: "p".into(),
            getrandom: true,
            suite: suite.into(),
            passed_over: passed_over.to_vec(),
            unbuilt: None,
        }
    }

    #[test]
    fn the_first_suite_that_serves_the_kernel_is_used_and_a_broken_package_fails() {
        let pkgs = || Ok(vec!["linux-binary-7:s390x".to_string()]);
        let tries = || {
            [
                ("trixie-backports", pkgs()),
                ("sid", pkgs()),
                ("experimental", pkgs()),
            ]
            .into_iter()
        };
        // The preferred suite serves it: the others are not even tried.
        let mut asked = Vec::new();
        let k = first_served("m", Path::new("l"), tries(), |s, _, p| {
            asked.push(s.to_string());
            Ok(kernel(s, p))
        })
        .unwrap();
        assert_eq!((k.origin().as_str(), asked.len()), ("trixie-backports", 1));
        // Its download fails (a mirror listing files it does not serve): the next one,
        // and the report says why.
        let k = first_served("m", Path::new("l"), tries(), |s, _, p| match s {
            "trixie-backports" => Err(Unbootable::Unavailable("404 Not Found".into())),
            _ => Ok(kernel(s, p)),
        })
        .unwrap();
        assert_eq!(k.origin(), "sid (trixie-backports: 404 Not Found)");
        // Not in the index: the same.
        let no_index = [("trixie-backports", Err("no linux-image".to_string()))];
        let k = first_served(
            "m",
            Path::new("l"),
            no_index.into_iter().chain(tries().skip(1)),
            |s, _, p| Ok(kernel(s, p)),
        )
        .unwrap();
        assert_eq!(k.origin(), "sid (trixie-backports: no linux-image)");
        // A package that came without a kernel is a failure, not a reason to go on.
        let mut asked = Vec::new();
        let e = first_served("m", Path::new("l"), tries(), |s, _, _| {
            asked.push(s.to_string());
            Err(Unbootable::Failed("no kernel found in x.deb".into()))
        });
        assert_eq!(
            e.unwrap_err(),
            Unbootable::Failed("no kernel found in x.deb".into())
        );
        assert_eq!(asked, ["trixie-backports"]);
        // Nothing served anywhere: Unavailable, with every suite's reason.
        let e = first_served("m", Path::new("l"), tries(), |s, _, _| {
            Err(Unbootable::Unavailable(format!("{s} down")))
        });
        assert_eq!(
            e.unwrap_err(),
            Unbootable::Unavailable(
                "trixie-backports: trixie-backports down; sid: sid down; \
                 experimental: experimental down"
                    .into()
            )
        );
    }

    #[test]
    fn the_configuration_says_whether_the_vdso_has_getrandom() {
        assert!(exports_getrandom("# x\nCONFIG_VDSO_GETRANDOM=y\n"));
        assert!(!exports_getrandom("# CONFIG_VDSO_GETRANDOM is not set\n"));
    }
}
