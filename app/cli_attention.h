// `trainscope-cli attention`: the attention benchmark from the command line.
#pragma once

namespace CLI {
class App;
}

// Registers the `attention` subcommand on `app`. When it runs, `exit_code` becomes 0 (ok),
// 2 (bad input; the message names the bad value on stderr) or 3 (a failed run, or a cell
// whose result was wrong).
void addAttentionCommand(CLI::App& app, int& exit_code);
