"""What every feature is built on (handler/features/), below them all: a section's fields
(`fields`), the run it is built from (`context`), its registration mark (`shown`), the page's
words (`wording`) and figures' geometry (`charts`), and what a finisher plugs into (`finishing`,
`parts`). The registries above (handler/report/findings/, handler/report/finishers/) assemble
the features."""
