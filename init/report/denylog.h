/* denylog: `ward --denials FILE`: what an audit log (ward's own lines, as
 * it wrote them to stderr) says was refused, grouped by what a person would
 * allow, each with the setting that would: proxy hosts no rule names, the
 * questions that did not end in an allow, the egress guard's refusals,
 * Landlock's denials. Nothing is changed. Every line is read as hostile
 * (the agent chose the names, commands and paths in it): only printable
 * ASCII is printed, lines past 8 KiB are skipped. */
#ifndef WARD_DENYLOG_H
#define WARD_DENYLOG_H

/* Reads path ("-": stdin), prints the report on stdout. 0, 1 (stdout
 * failed) or 2 (the file cannot be read). */
int denylog_main(const char *path);

#endif
