// Tailwind CSS v4 for Next's CSS pipeline (components/styles.css).
export default { plugins: { "@tailwindcss/postcss": {} } };
