//! cgroup v2 step cgroups: where [`super::cpuset::CgroupCpuset`] puts a
//! bound task when the host runs in a cgroup v2 hierarchy that offers the
//! `cpuset` controller.
//!
//! # Layout
//! Task `T` of step `S` of job `J` goes to
//! `<parent>/slurm-wasm/job_J/step_S/task_T`. `<parent>` is the host's own
//! cgroup (the `0::` line of `/proc/self/cgroup`) or one the embedder names.
//! The shape is Slurm's task/cgroup one (`job_J/step_S/.../task_T`, with
//! `step_batch`, `step_extern` and `step_interactive` for the reserved step
//! ids) below a directory of the host's own: the end of a step removes one
//! subtree, the end of a job (which names no step) another, and nothing
//! outside `<parent>/slurm-wasm` is created. Each level enables `+cpuset` in
//! its `cgroup.subtree_control` for the next. Only the task cgroup gets
//! `cpuset.cpus`: an empty `cpuset.cpus` means "the parent's CPUs" in
//! cgroup v2, so the tasks of a step may hold disjoint sets without the
//! step's cgroup narrowing any of them.
//!
//! # Where it works
//! cgroup v2 lets a cgroup give a controller to ordinary (domain) child
//! cgroups only while it holds no processes itself, the root cgroup
//! excepted. The host is a process of its own cgroup, so that cgroup serves
//! as `<parent>` only when it is the root; elsewhere the host has to run in
//! a leaf and the embedder names a parent without processes (for a systemd
//! unit with `Delegate=yes`: the unit's cgroup, the host moved into
//! `<unit>/host`, as slurmstepd moves itself into a `system` leaf).
//! Detection ([`super::cpuset::CgroupCpuset::detect`] and `under`) checks
//! this, that `<parent>` offers `cpuset`, and that the host may write there,
//! and says which failed ([`super::cpuset::CgroupCpuset::step_parent`]).
//!
//! # Fake trees
//! Only plain file operations are used, chosen to behave alike on cgroupfs
//! and on a plain directory tree standing in for it (tests): writing a file
//! creates it if missing (cgroupfs creates the interface files with the
//! directory), a missing `cgroup.subtree_control` reads as empty, and a
//! cgroup is removed with `rmdir`, deleting leftover plain files first only
//! when the answer is "not empty" (cgroupfs never gives it: it drops an
//! empty cgroup's interface files itself and refuses a busy one with
//! `EBUSY`).

use std::ffi::CString;
use std::fs;
use std::io::{self, ErrorKind};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::cpuset::BindTarget;
use super::CapabilityError;

/// The directory of the host's step cgroups inside `<parent>`.
const HOST_DIR: &str = "slurm-wasm";

/// The step cgroups below one parent cgroup of a cgroup v2 hierarchy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct StepCgroups {
    parent: PathBuf,
}

impl StepCgroups {
    /// Finds where step cgroups can go in the cgroup v2 hierarchy mounted
    /// at `root`: below `parent` (a cgroup path such as
    /// `/system.slice/slurmd.service`) or, when `None`, the host's own
    /// cgroup.
    ///
    /// # Errors
    /// Why cgroup v2 cpusets cannot be used, naming the file or rule: no
    /// `cgroup.controllers` at `root` (no cgroup v2 there), no `0::` line in
    /// `/proc/self/cgroup`, `cpuset` missing from the parent's
    /// `cgroup.controllers`, a parent other than the root that holds
    /// processes, or a parent the host may not write to.
    pub fn detect(root: &Path, parent: Option<&Path>) -> Result<StepCgroups, String> {
        let controllers = root.join("cgroup.controllers");
        if let Err(e) = fs::metadata(&controllers) {
            return Err(format!(
                "no cgroup v2 hierarchy at {} ({}: {e})",
                root.display(),
                controllers.display()
            ));
        }
        let relative =
            match parent {
                Some(parent) => parent.to_owned(),
                None => {
                    let text = fs::read_to_string("/proc/self/cgroup")
                        .map_err(|e| format!("/proc/self/cgroup: {e}"))?;
                    PathBuf::from(own_cgroup(&text).ok_or_else(|| {
                        "/proc/self/cgroup has no cgroup v2 line (`0::`)".to_owned()
                    })?)
                }
            };
        let relative = relative.strip_prefix("/").unwrap_or(&relative);
        let parent = if relative.as_os_str().is_empty() {
            root.to_owned()
        } else {
            root.join(relative)
        };
        let offered = read(&parent.join("cgroup.controllers"))?;
        if !lists(&offered, "cpuset") {
            return Err(format!(
                "the cpuset controller is not available to {} (cgroup.controllers: {:?})",
                parent.display(),
                offered.trim()
            ));
        }
        // Only non-root cgroups have `cgroup.type`; the root may hold
        // processes and still give controllers to its children.
        if parent.join("cgroup.type").exists() {
            let procs = read(&parent.join("cgroup.procs"))?;
            let pids: Vec<&str> = procs.split_whitespace().collect();
            if !pids.is_empty() {
                return Err(format!(
                    "{} holds processes ({}), and cgroup v2 gives controllers to child \
                     cgroups only from a cgroup without processes of its own: run the host \
                     in a leaf cgroup and name a parent without processes",
                    parent.display(),
                    pids.join(" ")
                ));
            }
        }
        writable(&parent)?;
        Ok(StepCgroups { parent })
    }

    /// The cgroup the step cgroups go under.
    pub fn parent(&self) -> &Path {
        &self.parent
    }

    /// Puts `target.pid` into its task cgroup restricted to `cpus`: creates
    /// the missing levels (enabling `+cpuset` for each), writes
    /// `cpuset.cpus`, then `cgroup.procs`. Returns the task cgroup.
    ///
    /// The kernel resets a moved process's affinity to its new cpuset, so a
    /// `sched_setaffinity` meant to hold must come after this.
    ///
    /// # Errors
    /// `failed`, naming the file or directory and the OS error: `EACCES`,
    /// `EBUSY` or `EOPNOTSUPP` where a cgroup with processes sits above the
    /// task cgroup, `ESRCH` for a gone pid, ...
    pub fn bind(&self, target: &BindTarget, cpus: &[u32]) -> Result<PathBuf, CapabilityError> {
        let levels = [
            HOST_DIR.to_owned(),
            format!("job_{}", target.job_id),
            step_name(target.step_id),
            format!("task_{}", target.local_id),
        ];
        let mut dir = self.parent.clone();
        for level in levels {
            enable_cpuset(&dir)?;
            dir.push(level);
            make_dir(&dir)?;
        }
        write(&dir.join("cpuset.cpus"), &cpu_list(cpus))?;
        write(&dir.join("cgroup.procs"), &target.pid.to_string())?;
        Ok(dir)
    }

    /// Removes the cgroups of step `step_id` of `job_id` (of every step of
    /// the job when `None`), and the job's cgroup once it has no steps
    /// left. Nothing to remove is no error.
    ///
    /// # Errors
    /// `failed` for a cgroup that still holds processes (left in place) or
    /// that could not be read or removed, naming it and the OS error.
    pub fn release(&self, job_id: u32, step_id: Option<u32>) -> Result<(), CapabilityError> {
        let job = self.parent.join(HOST_DIR).join(format!("job_{job_id}"));
        match step_id {
            None => remove_tree(&job),
            Some(step) => {
                remove_tree(&job.join(step_name(step)))?;
                // Other steps of the job may still run: then it stays.
                remove_if_empty(&job).map(|_| ())
            }
        }
    }
}

/// The cgroup v2 path in `/proc/self/cgroup` text: its `0::` line.
fn own_cgroup(text: &str) -> Option<&str> {
    text.lines().find_map(|line| line.strip_prefix("0::"))
}

/// Slurm's step cgroup name: `step_<id>`, or `step_batch`, `step_extern`
/// and `step_interactive` for the reserved ids.
fn step_name(step_id: u32) -> String {
    match step_id {
        0xffff_fffa => "step_interactive".into(),
        0xffff_fffb => "step_batch".into(),
        0xffff_fffc => "step_extern".into(),
        id => format!("step_{id}"),
    }
}

/// The cpuset list format: ascending ranges, `0-1,4`.
fn cpu_list(cpus: &[u32]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted
        .chunk_by(|a, b| a + 1 == *b)
        .map(|run| match run {
            [single] => single.to_string(),
            [first, .., last] => format!("{first}-{last}"),
            [] => unreachable!("chunk_by yields no empty runs"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Does a cgroup controller list name `controller`?
fn lists(text: &str, controller: &str) -> bool {
    text.split_whitespace().any(|c| c == controller)
}

fn failed(action: &str, path: &Path, error: io::Error) -> CapabilityError {
    CapabilityError::Failed(format!("{action} {}: {error}", path.display()))
}

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// Fails unless the host may create entries in `dir` (`access(W_OK)`:
/// permissions and read-only mounts).
fn writable(dir: &Path) -> Result<(), String> {
    let c_path = CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| format!("{}: path holds a NUL byte", dir.display()))?;
    // SAFETY: `c_path` is a valid NUL-terminated string for the call.
    if unsafe { libc::access(c_path.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(format!(
            "the host may not create cgroups in {}: {}",
            dir.display(),
            io::Error::last_os_error()
        ))
    }
}

/// Writes `text` to `path`, creating it where it is missing.
fn write(path: &Path, text: &str) -> Result<(), CapabilityError> {
    fs::write(path, text).map_err(|e| failed(&format!("writing {text:?} to"), path, e))
}

/// Makes `cpuset` available to `dir`'s child cgroups, unless it already is.
fn enable_cpuset(dir: &Path) -> Result<(), CapabilityError> {
    let control = dir.join("cgroup.subtree_control");
    let enabled = match fs::read_to_string(&control) {
        Ok(text) => lists(&text, "cpuset"),
        Err(e) if e.kind() == ErrorKind::NotFound => false,
        Err(e) => return Err(failed("reading", &control, e)),
    };
    if enabled {
        Ok(())
    } else {
        write(&control, "+cpuset")
    }
}

/// Creates the cgroup `dir` unless it exists.
fn make_dir(dir: &Path) -> Result<(), CapabilityError> {
    match fs::create_dir(dir) {
        Err(e) if e.kind() != ErrorKind::AlreadyExists => Err(failed("creating", dir, e)),
        _ => Ok(()),
    }
}

/// Removes the cgroup `dir` and every cgroup below it, deepest first.
fn remove_tree(dir: &Path) -> Result<(), CapabilityError> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(failed("reading", dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| failed("reading", dir, e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            remove_tree(&entry.path())?;
        }
    }
    if remove_if_empty(dir)? {
        Ok(())
    } else {
        Err(CapabilityError::Failed(format!(
            "{} still holds processes; left in place",
            dir.display()
        )))
    }
}

/// Removes the cgroup `dir` if it holds no processes and no child cgroups:
/// `true` when it is gone (or was never there), `false` when it stays.
fn remove_if_empty(dir: &Path) -> Result<bool, CapabilityError> {
    match fs::remove_dir(dir) {
        Ok(()) => Ok(true),
        Err(e) => match e.kind() {
            ErrorKind::NotFound => Ok(true),
            ErrorKind::ResourceBusy => Ok(false),
            ErrorKind::DirectoryNotEmpty => remove_plain(dir),
            _ => Err(failed("removing", dir, e)),
        },
    }
}

/// Removes `dir` of a plain tree standing in for cgroupfs: its files first,
/// unless it has subdirectories (child cgroups), when it stays (`false`).
fn remove_plain(dir: &Path) -> Result<bool, CapabilityError> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| failed("reading", dir, e))? {
        let entry = entry.map_err(|e| failed("reading", dir, e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            return Ok(false);
        }
        files.push(entry.path());
    }
    for file in files {
        fs::remove_file(&file).map_err(|e| failed("removing", &file, e))?;
    }
    fs::remove_dir(dir).map_err(|e| failed("removing", dir, e))?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake cgroup v2 root: `cgroup.controllers` offering cpuset and cpu,
    /// an empty `cgroup.subtree_control`, no `cgroup.type` (the root).
    fn fake_root() -> tempfile::TempDir {
        let root = tempfile::tempdir().expect("tempdir");
        fs::write(root.path().join("cgroup.controllers"), "cpuset cpu\n").unwrap();
        fs::write(root.path().join("cgroup.subtree_control"), "").unwrap();
        root
    }

    fn target(step_id: u32, local_id: u32, pid: u32) -> BindTarget {
        BindTarget {
            job_id: 7,
            step_id,
            local_id,
            pid,
        }
    }

    fn text(path: impl AsRef<Path>) -> String {
        fs::read_to_string(path.as_ref())
            .unwrap_or_else(|e| panic!("{}: {e}", path.as_ref().display()))
    }

    fn message(error: CapabilityError) -> String {
        match error {
            CapabilityError::Failed(message) => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn own_cgroup_is_the_v2_line() {
        let hybrid = "4:memory:/slurm\n3:cpuset:/\n0::/user.slice/session-2.scope\n";
        assert_eq!(own_cgroup(hybrid), Some("/user.slice/session-2.scope"));
        assert_eq!(own_cgroup("3:cpuset:/\n1:cpu:/\n"), None);
    }

    #[test]
    fn cpu_lists_and_step_names_follow_the_kernel_and_slurm() {
        assert_eq!(cpu_list(&[4, 0, 1, 1]), "0-1,4");
        assert_eq!(cpu_list(&[1]), "1");
        assert_eq!(cpu_list(&[0, 2, 3, 4, 7]), "0,2-4,7");
        assert_eq!(step_name(3), "step_3");
        assert_eq!(step_name(0xffff_fffb), "step_batch");
        assert_eq!(step_name(0xffff_fffc), "step_extern");
        assert_eq!(step_name(0xffff_fffa), "step_interactive");
    }

    #[test]
    fn detection_names_what_is_missing() {
        let plain = tempfile::tempdir().unwrap();
        let err = StepCgroups::detect(plain.path(), Some(Path::new("/"))).unwrap_err();
        assert!(err.starts_with("no cgroup v2 hierarchy at"), "{err}");

        let root = fake_root();
        fs::write(root.path().join("cgroup.controllers"), "cpu memory\n").unwrap();
        let err = StepCgroups::detect(root.path(), Some(Path::new("/"))).unwrap_err();
        assert!(err.contains("cpuset controller is not available"), "{err}");

        let root = fake_root();
        let host = root.path().join("system.slice/slurmd.service");
        fs::create_dir_all(&host).unwrap();
        fs::write(host.join("cgroup.controllers"), "cpuset cpu\n").unwrap();
        fs::write(host.join("cgroup.type"), "domain\n").unwrap();
        fs::write(host.join("cgroup.procs"), "4100\n4101\n").unwrap();
        let parent = Path::new("/system.slice/slurmd.service");
        let err = StepCgroups::detect(root.path(), Some(parent)).unwrap_err();
        assert!(err.contains("holds processes (4100 4101)"), "{err}");
        fs::write(host.join("cgroup.procs"), "").unwrap();
        let found = StepCgroups::detect(root.path(), Some(parent)).expect("usable");
        assert_eq!(found.parent(), host);
    }

    #[test]
    fn host_cgroup_comes_from_proc_self_cgroup() {
        let root = fake_root();
        let Some(own) = own_cgroup(&text("/proc/self/cgroup")).map(str::to_owned) else {
            // No cgroup v2 mounted anywhere: the kernel shows no `0::` line.
            let err = StepCgroups::detect(root.path(), None).unwrap_err();
            assert!(err.contains("no cgroup v2 line"), "{err}");
            return;
        };
        let relative = own.trim_start_matches('/');
        let dir = root.path().join(relative);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("cgroup.controllers"), "cpuset\n").unwrap();
        let found = StepCgroups::detect(root.path(), None).expect("usable");
        assert_eq!(found.parent(), dir);
    }

    #[test]
    fn binding_builds_the_task_cgroup_and_moves_the_pid() {
        let root = fake_root();
        let cgroups = StepCgroups::detect(root.path(), Some(Path::new("/"))).unwrap();
        let task = cgroups.bind(&target(0, 0, 4100), &[0, 1]).expect("bound");
        assert_eq!(task, root.path().join("slurm-wasm/job_7/step_0/task_0"));
        for level in [
            "",
            "slurm-wasm",
            "slurm-wasm/job_7",
            "slurm-wasm/job_7/step_0",
        ] {
            let control = root.path().join(level).join("cgroup.subtree_control");
            assert_eq!(text(&control), "+cpuset", "{}", control.display());
        }
        assert_eq!(text(task.join("cpuset.cpus")), "0-1");
        assert_eq!(text(task.join("cgroup.procs")), "4100");
        // The step's own cgroup leaves its CPUs to the parent (empty).
        assert!(!root
            .path()
            .join("slurm-wasm/job_7/step_0/cpuset.cpus")
            .exists());

        let task = cgroups.bind(&target(0, 1, 4101), &[1]).expect("bound");
        assert_eq!(text(task.join("cpuset.cpus")), "1");
        assert_eq!(text(task.join("cgroup.procs")), "4101");
    }

    #[test]
    fn an_enabled_controller_is_left_alone() {
        let root = fake_root();
        fs::write(root.path().join("cgroup.subtree_control"), "cpu cpuset\n").unwrap();
        let cgroups = StepCgroups::detect(root.path(), Some(Path::new("/"))).unwrap();
        cgroups.bind(&target(0, 0, 4100), &[0]).expect("bound");
        assert_eq!(
            text(root.path().join("cgroup.subtree_control")),
            "cpu cpuset\n"
        );
    }

    #[test]
    fn failures_name_the_path_and_the_os_error() {
        let root = fake_root();
        let cgroups = StepCgroups::detect(root.path(), Some(Path::new("/"))).unwrap();
        // A file where the host's directory belongs.
        fs::write(root.path().join("slurm-wasm"), "").unwrap();
        let err = message(cgroups.bind(&target(0, 0, 4100), &[0]).unwrap_err());
        let expected = format!(
            "reading {}: Not a directory",
            root.path()
                .join("slurm-wasm/cgroup.subtree_control")
                .display()
        );
        assert!(err.starts_with(&expected), "{err}");
    }

    #[test]
    fn release_removes_the_step_then_the_job_once_it_has_no_steps() {
        let root = fake_root();
        let cgroups = StepCgroups::detect(root.path(), Some(Path::new("/"))).unwrap();
        cgroups.bind(&target(0, 0, 4100), &[0]).unwrap();
        cgroups.bind(&target(0, 1, 4101), &[1]).unwrap();
        cgroups
            .bind(&target(0xffff_fffb, 0, 4000), &[0, 1])
            .unwrap();
        let job = root.path().join("slurm-wasm/job_7");

        cgroups.release(7, Some(0)).expect("step 0 released");
        assert!(!job.join("step_0").exists());
        assert!(job.join("step_batch/task_0").exists());

        cgroups
            .release(7, Some(0xffff_fffb))
            .expect("batch step released");
        assert!(!job.exists());
        assert!(root.path().join("slurm-wasm").is_dir());

        cgroups.bind(&target(1, 0, 4200), &[0]).unwrap();
        cgroups.bind(&target(2, 0, 4201), &[0]).unwrap();
        cgroups.release(7, None).expect("job released");
        assert!(!job.exists());
        cgroups.release(8, Some(0)).expect("nothing to release");
    }
}
