/* The bad-case list (templates/admin/feedback/badcase/change_list.html), run after it. */
// A session id longer than its column is cut short (admin.css): the whole id in a tooltip.
for (const link of document.querySelectorAll("#result_list th.field-session_id a")) {
  link.title = link.textContent;
}
