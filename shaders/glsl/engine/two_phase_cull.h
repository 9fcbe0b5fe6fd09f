// The rule of two-phase culling, written once for every cull that specialises it (the
// camera's objects, the shadow casters, the meshlets). A view flagged CULL_TWO_PHASE is
// culled in two phases:
// - early: what the view kept last frame (its history bit) and passes this frame's tests but
//   occlusion is drawn; that depth is this frame's occluder set, reduced into the pyramid.
//   No bit yet.
// - late: every item is tested, occlusion last, against the pyramid of the early depth; an
//   item the pyramid does not prove hidden is visible (its bit, next frame's history) and is
//   drawn unless the early phase drew it, which it did exactly when the view kept it last
//   frame, since both phases run the same tests but occlusion. So a visible item is drawn
//   once, and never left out: an item hidden last frame is judged by this frame's pyramid.
// A view of one phase (a light view without occlusion) is decided in the early phase: every
// item passing its tests is drawn and visible; its late phase does nothing.
//
// The includer (after `cull_inputs.h`) defines `struct CullItem` (what it reads of an item
// once) and:
//   uint cull_tests(uint view, CullView v, CullItem item): VERDICT_VISIBLE when the item
//     passes every test of the view but occlusion, else the first reason it fails
//     (VERDICT_FRUSTUM, VERDICT_BACK_FACING, or VERDICT_UNTESTED for items this phase skips);
//   int cull_occlusion(uint view, CullView v, CullItem item) (late phase): HIZ_VISIBLE,
//     HIZ_HIDDEN or HIZ_UNDECIDED for the item in the view's pyramid;
//   void cull_judged(uint view, uint item, CullItem it, uint verdict): the phase that decides
//     the view's answer reports every item's verdict (statistics, verdict buffers);
//   void cull_keep(uint view, uint item, CullItem it, bool draw, bool bit): the item is drawn
//     into the view's list in this phase (`draw`) and/or visible in it (`bit`).
#ifndef TWO_PHASE_CULL_H
#define TWO_PHASE_CULL_H

// Whether this phase looks at `item` in `view` at all: the early phase of a two-phase view
// only at what the view kept last frame, so a shader may skip loading everything else.
bool cull_needs_item(uint view, uint item) {
#if CULL_LATE
    return (views[view].flags & CULL_TWO_PHASE) != 0u;
#else
    return (views[view].flags & CULL_TWO_PHASE) == 0u || cull_kept_last_frame(view, item);
#endif
}

// This phase's work for `item` in `view`.
void cull_in_view(uint view, uint item, CullItem it) {
    CullView v = views[view];
    bool two_phase = (v.flags & CULL_TWO_PHASE) != 0u;
#if CULL_LATE
    if (!two_phase) {
        return;
    }
    uint verdict = cull_tests(view, v, it);
    if (verdict == VERDICT_VISIBLE && (v.flags & CULL_OCCLUSION) != 0u) {
        int answer = cull_occlusion(view, v, it);
        verdict = answer == HIZ_HIDDEN ? VERDICT_OCCLUDED : answer == HIZ_UNDECIDED ? VERDICT_CONSERVATIVE : verdict;
    }
    cull_judged(view, item, it, verdict);
    if (verdict == VERDICT_VISIBLE || verdict == VERDICT_CONSERVATIVE) {
        cull_keep(view, item, it, !cull_kept_last_frame(view, item), true);
    }
#else
    if (two_phase) {
        if (cull_kept_last_frame(view, item) && cull_tests(view, v, it) == VERDICT_VISIBLE) {
            cull_keep(view, item, it, true, false);
        }
        return;
    }
    uint verdict = cull_tests(view, v, it);
    cull_judged(view, item, it, verdict);
    if (verdict == VERDICT_VISIBLE) {
        cull_keep(view, item, it, true, true);
    }
#endif
}
#endif
