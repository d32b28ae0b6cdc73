//! The srun command line of a case, as `record.sh` wrote it:
//! `-p hw --label -J anchor-<name> <options> $TASK`.
//!
//! Only the options the recording uses are known; anything else is an
//! error, so a new case in `record.sh` needs its option taught here (and to
//! the test that turns options into a launch request).

use super::{integer, Parsed};

/// The options of one `srun`, as text where Slurm parses them further.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrunOptions {
    /// `-p`.
    pub partition: String,
    /// `-N`, when given.
    pub nodes: Option<u32>,
    /// `-n`.
    pub ntasks: u32,
    /// `-c`, 1 when not given.
    pub cpus_per_task: u16,
    /// `-c` was given (it makes srun's step exact).
    pub cpus_per_task_given: bool,
    /// `-m`, when given.
    pub distribution: Option<String>,
    /// `--cpu-bind=` as written.
    pub cpu_bind: Option<String>,
    /// `--overcommit`.
    pub overcommit: bool,
    /// `--exclusive`: the job holds its nodes whole.
    pub exclusive: bool,
}

/// Parses the command line after `srun `.
pub fn parse(command: &str) -> Parsed<SrunOptions> {
    let mut words = command.split_whitespace();
    let mut options = SrunOptions {
        partition: String::new(),
        nodes: None,
        ntasks: 0,
        cpus_per_task: 1,
        cpus_per_task_given: false,
        distribution: None,
        cpu_bind: None,
        overcommit: false,
        exclusive: false,
    };
    let mut task = None;
    while let Some(word) = words.next() {
        let mut value = || {
            words
                .next()
                .ok_or_else(|| format!("`{word}` without a value"))
        };
        match word {
            "-p" => options.partition = value()?.to_owned(),
            "-J" => {
                value()?;
            }
            "--label" => {}
            "-N" => options.nodes = Some(integer(value()?)?),
            "-n" => options.ntasks = integer(value()?)?,
            "-c" => {
                options.cpus_per_task = integer(value()?)?;
                options.cpus_per_task_given = true;
            }
            "-m" => options.distribution = Some(value()?.to_owned()),
            "--overcommit" => options.overcommit = true,
            "--exclusive" => options.exclusive = true,
            "$TASK" => task = Some(word),
            _ => match word.strip_prefix("--cpu-bind=") {
                Some(bind) => options.cpu_bind = Some(bind.to_owned()),
                None => {
                    // `-N2`, `-n4`, `-c2`: a short option glued to its value.
                    let (flag, number) = word.split_at(word.len().min(2));
                    match flag {
                        "-N" => options.nodes = Some(integer(number)?),
                        "-n" => options.ntasks = integer(number)?,
                        "-c" => {
                            options.cpus_per_task = integer(number)?;
                            options.cpus_per_task_given = true;
                        }
                        _ => return Err(format!("unknown srun option `{word}`")),
                    }
                }
            },
        }
    }
    if task.is_none() || options.ntasks == 0 || options.partition.is_empty() {
        return Err(format!(
            "expected `-p <partition> -n <tasks> ... $TASK`, found `{command}`"
        ));
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_of_the_recording() {
        let o = parse("-p hw --label -J anchor-x -N2 -n4 --cpu-bind=verbose,map_cpu:1,0 $TASK")
            .unwrap();
        assert_eq!(
            o,
            SrunOptions {
                partition: "hw".into(),
                nodes: Some(2),
                ntasks: 4,
                cpus_per_task: 1,
                cpus_per_task_given: false,
                distribution: None,
                cpu_bind: Some("verbose,map_cpu:1,0".into()),
                overcommit: false,
                exclusive: false,
            }
        );
        let o = parse("-p hw -n1 -c2 -m block:cyclic --overcommit $TASK").unwrap();
        assert_eq!(o.cpus_per_task, 2);
        assert_eq!(o.distribution.as_deref(), Some("block:cyclic"));
        assert!(o.overcommit);
    }

    #[test]
    fn unknown_or_incomplete_lines_are_refused() {
        assert!(parse("-p hw -n2 --exclusive $TASK").unwrap().exclusive);
        assert!(parse("-p hw -n2 --exact $TASK").is_err());
        assert!(parse("-p hw -n2").is_err());
        assert!(parse("-p hw -n $TASK").is_err());
    }
}
