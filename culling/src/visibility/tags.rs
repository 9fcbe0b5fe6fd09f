//! The `Culled` tag, changed only on transitions.
//!
//! A drawable object the cull rejected carries [`Culled`]; every other object (visible, or
//! not drawable at all) carries none. The pass records which objects' entities carried the
//! tag this frame (their archetype has it), so the changes are one word operation per 64
//! objects: `want = drawable & !visible`, `changed = want ^ tagged`. Only changed entities
//! get a command, so a still camera makes no structural change.
//!
//! The changes go through the stage's command buffer and are applied when the Visibility
//! stage ends, before the Render stage. That is the only structural path a system has (it
//! holds `&World`). Its cost per change is measured by the `visibility_tags` benchmark group
//! next to direct `World::insert_one` / `remove_one`; recording costs a few nanoseconds per
//! change, applying is an archetype move either way.

use ecs::Culled;
use runtime::hecs::CommandBuffer;

use super::result::Visibility;

/// Records the tag changes of this frame into `commands`; returns (inserted, removed).
pub(crate) fn record_tag_changes(visibility: &Visibility, commands: &mut CommandBuffer) -> (usize, usize) {
    runtime::profile_zone!("visibility tags");
    let (mut inserted, mut removed) = (0, 0);
    let words = visibility.bits.words();
    for (word_index, &visible) in words.iter().enumerate() {
        let drawable = visibility.drawable[word_index];
        let tagged = visibility.tagged[word_index];
        let want = drawable & !visible;
        let mut changed = want ^ tagged;
        while changed != 0 {
            let offset = changed.trailing_zeros() as usize;
            changed &= changed - 1;
            let entity = visibility.objects.entities[word_index * 64 + offset];
            if want >> offset & 1 == 1 {
                commands.insert_one(entity, Culled);
                inserted += 1;
            } else {
                commands.remove_one::<Culled>(entity);
                removed += 1;
            }
        }
    }
    (inserted, removed)
}
