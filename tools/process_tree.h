/*
 * The processes a run started and everything they started in turn: hysim
 * run adopts the orphans among them, and at the run's end stops whatever is
 * still running, so that nothing outlives the run however it ends.
 */
#ifndef HYSIM_TOOLS_PROCESS_TREE_H
#define HYSIM_TOOLS_PROCESS_TREE_H

/* Makes this process the parent of its descendants that lose theirs (PR_SET_CHILD_SUBREAPER). */
void process_tree_adopt(void);

/* Stops every descendant still running: SIGTERM, up to grace_ms to go, then SIGKILL; reaps them. Returns how
 * many were running. */
int process_tree_end(int grace_ms);

#endif
