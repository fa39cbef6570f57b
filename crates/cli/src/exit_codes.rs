//! The exit codes, in one text for `--help` and the manual page.

/// The exit codes, as `--help` and docs/operator-cli.md list them.
pub const EXIT_CODES: &str = "\
Exit codes:
  0  done: every message the queue counted was read (and acted on)
  1  an error (named, with the AWS operation and queue), messages that could not be
     replayed or discarded and are still on the queue, no message with the id `show`
     was given, a body kept in S3 that is missing or altered (show, export), or the
     prompt was declined
  2  a usage error: a bad flag or value, an --out that exists, a profile the config
     files do not have, no region, or a change without --yes and no terminal
  3  the canary came back, or could not be checked: nothing more was replayed
  4  messages in flight were not seen (held by a consumer or an interrupted run):
     run again after their visibility timeout
  5  messages the queue counts were not read: on a FIFO queue, past the first
     messages of a group (run again with --rotate-groups), or past a message that
     could not be moved, or leases that lapsed mid-read (give a longer
     --visibility-timeout)
 130 stopped by SIGINT (Ctrl-C) or SIGTERM: what it held is visible again";
