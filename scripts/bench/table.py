"""The results table of the bench scripts (scripts/bench/*.sh), printed from their inline
Python:

    sys.path.insert(0, "scripts/bench"); from table import print_table
    print_table(header, rows, markdown)

Markdown is what the docs paste in; the padded columns are for reading in a terminal,
where a Markdown row of a dozen columns wraps into noise. Cells are strings.
"""


def print_table(hdr, rows, markdown):
    if markdown:
        print("| " + " | ".join(hdr) + " |")
        print("|" + "---|" * len(hdr))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        w = [max(len(h), *(len(row[k]) for row in rows)) for k, h in enumerate(hdr)]
        print("  ".join(h.ljust(w[k]) for k, h in enumerate(hdr)))
        for row in rows:
            print("  ".join(c.ljust(w[k]) for k, c in enumerate(row)))
