//! Go's `text/tabwriter` with kubectl's settings (minwidth 6, padding 3, pad character ' ',
//! no flags) [kubectl pkg/printers/tabwriter.go `GetNewTabWriter`; go src/text/tabwriter
//! `Writer.format`]: cells end at a tab, a column is as wide as its widest cell plus the
//! padding over a block of consecutive lines that have it, and the text after a line's last tab
//! is not part of any column.

const MIN_WIDTH: usize = 6;
const PADDING: usize = 3;

/// Aligns the tab-separated `text` (lines end with `\n`) with kubectl get's settings.
pub fn align(text: &str) -> String {
    align_with(text, MIN_WIDTH, PADDING)
}

/// Aligns `text` with the given minimum cell width and padding (`kubectl describe`'s
/// `tabbedString` uses 0 and 2).
pub fn align_with(text: &str, min_width: usize, padding: usize) -> String {
    let lines: Vec<Vec<&str>> = text
        .split_inclusive('\n')
        .map(|l| l.strip_suffix('\n').unwrap_or(l).split('\t').collect())
        .collect();
    let ends_with_newline = text.ends_with('\n');
    let mut out = String::with_capacity(text.len() * 2);
    let mut widths = Vec::new();
    let settings = (min_width, padding);
    format(&lines, 0, lines.len(), &mut widths, &mut out, settings);
    if !ends_with_newline && out.ends_with('\n') {
        out.pop();
    }
    out
}

fn width(s: &str) -> usize {
    s.chars().count()
}

fn format(
    lines: &[Vec<&str>],
    mut line0: usize,
    line1: usize,
    widths: &mut Vec<usize>,
    out: &mut String,
    (min_width, padding): (usize, usize),
) {
    let column = widths.len();
    let mut this = line0;
    while this < line1 {
        if column + 1 >= lines[this].len() {
            this += 1;
            continue;
        }
        write_lines(lines, line0, this, widths, out);
        line0 = this;
        let mut w = min_width;
        while this < line1 && column + 1 < lines[this].len() {
            w = w.max(width(lines[this][column]) + padding);
            this += 1;
        }
        widths.push(w);
        format(lines, line0, this, widths, out, (min_width, padding));
        widths.pop();
        line0 = this;
    }
    write_lines(lines, line0, line1, widths, out);
}

fn write_lines(
    lines: &[Vec<&str>],
    line0: usize,
    line1: usize,
    widths: &[usize],
    out: &mut String,
) {
    for line in &lines[line0..line1] {
        for (j, cell) in line.iter().enumerate() {
            out.push_str(cell);
            if j + 1 < line.len() {
                if let Some(&w) = widths.get(j) {
                    for _ in width(cell)..w {
                        out.push(' ');
                    }
                }
            }
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::align;

    #[test]
    fn columns_are_the_widest_cell_plus_three_and_at_least_six() {
        assert_eq!(
            align("NAME\tREADY\tAGE\nnginx-deployment\t3/3\t1s\n"),
            "NAME               READY   AGE\nnginx-deployment   3/3     1s\n"
        );
        assert_eq!(align("A\tB\nx\ty\n"), "A     B\nx     y\n");
    }

    #[test]
    fn a_blank_line_ends_a_column_block() {
        assert_eq!(
            align("A\tB\nlonger-name\ty\n\nC\tD\n"),
            "A             B\nlonger-name   y\n\nC     D\n"
        );
    }
}
