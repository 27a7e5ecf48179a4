/* The fixed parts of the `jinxctl inspect --html` page (inspect_html.c).
 *
 * html_script is the page's only script: it parses the JSON data block, shows a clicked
 * cue point's instruction, symbol and source line (textContent only, never markup), and
 * stamps the render time (parse, style and layout, in ms) on <html data-render-ms> for
 * tests/integration/html.sh. The page's Content-Security-Policy admits it by its SHA-256,
 * so the text must be emitted byte for byte. html_style assumes the geometry
 * inspect_html.c draws the arrows with: 20 px rows, a 26 px header, border-box sizing. */
#ifndef JINX_HTML_ASSETS_H
#define JINX_HTML_ASSETS_H

extern const char html_script[];
extern const char html_style[];

#endif
