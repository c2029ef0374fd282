// Long answers as a model writes them, for the mock provider to stream: the Markdown tests
// and scripts/bench-render.mjs render the same text.

/** Markdown of about `bytes` bytes, as a model writes it, ending with `last`. */
export function longMarkdown(bytes, last) {
  const parts = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const part = [
      `## Section ${i}`,
      '',
      `Paragraph ${i} has **bold words**, *emphasis*, \`code\` and a [link](https://example.com/${i}). It goes on for a while so that it looks like prose a model would write.`,
      '',
      `- point ${i}.1 with some words`,
      `- point ${i}.2 with more words`,
      '',
      '```js',
      `const value${i} = compute(${i});`,
      '```',
      '',
      '',
    ].join('\n');
    parts.push(part);
    size += part.length;
  }
  parts.push(`That is all: ${last}.`);
  return parts.join('');
}

/** One paragraph of about `bytes` bytes: lines joined by single newlines. */
export function onePara(bytes, last) {
  const lines = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `Line ${i} of a long paragraph with **bold** and \`code\` in it, going on.\n`;
    lines.push(line);
    size += line.length;
  }
  lines.push(`That is all: ${last}.`);
  return lines.join('');
}
