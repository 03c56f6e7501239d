// Loads a snapshot pickle the way https://pytorch.org/memory_viz does, with the viewer's own
// code: its MemoryViz.js is read from where it is installed (never kept in this repository),
// the functions that turn a file into the Active Memory Timeline's data (unpickle,
// annotate_snapshot, process_alloc_data and the helpers they call) are cut out of it by name
// and run in a fresh context. The rest of the file draws with d3 in a browser.
//   node memory_viz_check.js MemoryViz.js SNAPSHOT.pickle
// Prints one JSON line: the entries of device 0's trace, the categories the legend would list,
// the timeline's elements and colours. Then unpickles a list of 500,000 items written in one
// MARK ... APPENDS, as TrainScope once wrote every list, and reports whether it overflowed the
// stack, so that the test knows this Node shows the browser's failure.
'use strict';
const fs = require('fs');
const vm = require('vm');

// The source of `function NAME(...) {...}` at the start of a line of `src`, braces matched
// outside strings, template literals (with their ${} parts) and comments.
function cutFunction(src, name) {
  const start = src.search(new RegExp(`^function ${name}\\(`, 'm'));
  if (start < 0) throw new Error(`MemoryViz.js has no function ${name}`);
  // The body's brace follows the parameters, which may destructure: ({name, filename}).
  let i = src.indexOf('(', start);
  for (let parens = 0; ; i++) {
    if (src[i] === '(') parens++;
    else if (src[i] === ')' && --parens === 0) break;
  }
  i = src.indexOf('{', i);
  const modes = [{kind: 'code', depth: 0}];
  for (; i < src.length; i++) {
    const c = src[i];
    const top = modes[modes.length - 1];
    if (top.kind === 'template') {
      if (c === '\\') i++;
      else if (c === '`') modes.pop();
      else if (c === '$' && src[i + 1] === '{') {
        modes.push({kind: 'code', depth: 1});
        i++;
      }
      continue;
    }
    if (c === '/' && src[i + 1] === '/') {
      i = src.indexOf('\n', i);
    } else if (c === '/' && src[i + 1] === '*') {
      i = src.indexOf('*/', i) + 1;
    } else if (c === '"' || c === "'") {
      for (i++; src[i] !== c; i++) if (src[i] === '\\') i++;
    } else if (c === '`') {
      modes.push({kind: 'template'});
    } else if (c === '{') {
      top.depth++;
    } else if (c === '}') {
      top.depth--;
      if (top.depth === 0) {
        if (modes.length === 1) return src.slice(start, i + 1);
        modes.pop();  // the end of a template's ${...}
      }
    }
  }
  throw new Error(`function ${name} does not end`);
}

const [viewerPath, snapshotPath] = process.argv.slice(2);
const viewer = fs.readFileSync(viewerPath, 'utf8');
const names = ['unpickle', 'annotate_snapshot', 'version_space', 'process_alloc_data',
               'formatSize', 'formatAddr', 'format_frames', 'elideRepeats', 'frameFilter'];
const context = vm.createContext({TextDecoder, console});
vm.runInContext(names.map(n => cutFunction(viewer, n)).join('\n\n'), context);
const toArrayBuffer = b => b.buffer.slice(b.byteOffset, b.byteOffset + b.length);

const file = fs.readFileSync(snapshotPath);
const t0 = Date.now();
const snapshot = context.unpickle(toArrayBuffer(file));
const unpickledMs = Date.now() - t0;
const entries = snapshot.device_traces[0].length;
context.annotate_snapshot(snapshot);
const data = context.process_alloc_data(snapshot, 0, false, 15000);
const colours = data.allocations_over_time.filter(d => d.elem !== 'summarized').map(d => d.color);

// The control: one batch of 500,000 small ints.
const n = 500000;
const unbatched = Buffer.alloc(4 + 2 * n + 2);
unbatched.set([0x80, 2, 0x5d /* ] */, 0x28 /* ( */]);
for (let k = 0; k < n; k++) unbatched.set([0x4b /* K */, k & 0xff], 4 + 2 * k);
unbatched.set([0x65 /* e */, 0x2e /* . */], 4 + 2 * n);
let control;
try {
  control = `loaded ${context.unpickle(toArrayBuffer(unbatched)).length}`;
} catch (e) {
  control = `${e.name}: ${e.message}`;
}

console.log(JSON.stringify({
  entries,
  bytes: file.length,
  unpickled_ms: unpickledMs,
  last_action: snapshot.device_traces[0].at(-1).action,
  categories: snapshot.categories,
  elements: data.elements_length,
  max_size: data.max_size,
  drawn: colours.length,
  min_colour: Math.min(...colours.slice(0, 10000)),
  colours_valid: colours.every(c => Number.isInteger(c) && c >= 0),
  unbatched_control: control,
}));
